/*
 * A minimal WAV writer: the 44-byte RIFF header (a `fmt ` chunk of 16-bit PCM, then the `data` chunk) and the samples,
 * little-endian. Written by hand on purpose, as png.ts is: the generator only writes mono 16-bit PCM, a dozen lines,
 * and the WAV packages on npm (wavefile, node-wav) bring decoders, codecs and resamplers for nothing here.
 */

/** A WAV file of 16-bit mono PCM `samples` at `sampleRate` samples per second. */
export function encodeWav(samples: Int16Array, sampleRate: number): Buffer {
  const dataBytes = samples.length * 2;
  const out = Buffer.alloc(44 + dataBytes);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write('WAVE', 8, 'latin1');
  out.write('fmt ', 12, 'latin1');
  out.writeUInt32LE(16, 16); // the fmt chunk's size
  out.writeUInt16LE(1, 20); // audio format 1: PCM
  out.writeUInt16LE(1, 22); // channels
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28); // byte rate
  out.writeUInt16LE(2, 32); // block align: bytes per sample frame
  out.writeUInt16LE(16, 34); // bits per sample
  out.write('data', 36, 'latin1');
  out.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, 44 + i * 2);
  return out;
}

/**
 * `seconds` of a sine tone at `frequencyHz` as 16-bit samples at `sampleRate`, at a quarter of full scale. Math.sin
 * is V8's port of fdlibm on every platform, so the samples are the same wherever the generator runs.
 */
export function sineSamples(frequencyHz: number, seconds: number, sampleRate: number): Int16Array {
  const n = Math.round(seconds * sampleRate);
  const samples = new Int16Array(n);
  const step = (2 * Math.PI * frequencyHz) / sampleRate;
  for (let i = 0; i < n; i++) samples[i] = Math.round(8191 * Math.sin(step * i));
  return samples;
}
