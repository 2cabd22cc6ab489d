/*
 * The duration of a base64 WAV or MP3 (OpenAI's `input_audio` formats) read from its headers, decoding only the few
 * bytes it needs, never the whole file: a data chunk or a frame stream is never read, so a 30 MB part costs a few
 * small base64 decodes. Used to check a dataset's audio parts, by the simulator (an audio part is worth its duration
 * in tokens) and for the short placeholder terminal output shows instead of the bytes.
 *
 * WAV: the RIFF chunks are walked to `fmt ` (its byte rate) and `data` (its size); the duration is the data size over
 * the byte rate, exact for PCM. A streamed WAV whose data size is unset (0 or 0xFFFFFFFF) or past the end of the file
 * counts the bytes the file has. MP3: after an ID3v2 tag, the first frame header gives the version, layer, sample
 * rate and bit rate; a Xing/Info or VBRI header in that frame gives the frame count and so the exact duration (what
 * encoders write for VBR files); without one the file is taken as constant bit rate, its bytes over the first frame's
 * bit rate (an approximation for a VBR file with no such header, and a trailing ID3v1 tag counts as audio).
 */

/** The audio formats an `input_audio` part may have (OpenAI's chat API: "wav" or "mp3"). */
export type AudioFormat = 'wav' | 'mp3';

/** What the headers say. */
export interface AudioHeader {
  /** Duration in seconds. */
  seconds: number;
  /** How the duration was found: from the headers exactly, or estimated from an MP3's bit rate. */
  exact: boolean;
}

/** Bytes in `base64` once decoded (its length, padding taken off). */
export function base64ByteLength(base64: string): number {
  let padding = 0;
  if (base64.endsWith('==')) padding = 2;
  else if (base64.endsWith('=')) padding = 1;
  return Math.floor((base64.length * 3) / 4) - padding;
}

/** Bytes `start` to `end` (exclusive, clipped to the data) of the data `base64` encodes, decoding only those. */
function bytesAt(base64: string, start: number, end: number): Buffer {
  const from = Math.floor(start / 3) * 4;
  const to = Math.min(base64.length, Math.ceil(end / 3) * 4);
  if (from >= to) return Buffer.alloc(0);
  const skip = start % 3;
  return Buffer.from(base64.slice(from, to), 'base64').subarray(skip, skip + (end - start));
}

/** Reads the duration of base64 audio `data` of `format` from its headers; a string saying why it cannot otherwise. */
export function readAudioHeader(data: string, format: AudioFormat): AudioHeader | string {
  return format === 'wav' ? readWav(data) : readMp3(data);
}

/** RIFF chunks looked at before giving up on finding `data` (a WAV has a handful). */
const MAX_CHUNKS = 64;

function readWav(data: string): AudioHeader | string {
  const total = base64ByteLength(data);
  const head = bytesAt(data, 0, 12);
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return 'not a WAV file (no RIFF/WAVE header)';
  let byteRate: number | undefined;
  let at = 12;
  for (let i = 0; i < MAX_CHUNKS && at + 8 <= total; i++) {
    const chunk = bytesAt(data, at, at + 8);
    const id = chunk.toString('latin1', 0, 4);
    const size = chunk.readUInt32LE(4);
    if (id === 'fmt ') {
      const fmt = bytesAt(data, at + 8, at + 8 + 16);
      if (fmt.length < 16) return 'a WAV file whose fmt chunk is cut short';
      byteRate = fmt.readUInt32LE(8);
      if (byteRate === 0) return 'a WAV file with a byte rate of 0';
    } else if (id === 'data') {
      if (byteRate === undefined) return 'a WAV file with no fmt chunk before its data';
      const available = total - (at + 8);
      const bytes = size === 0 || size === 0xffffffff || size > available ? available : size;
      return { seconds: bytes / byteRate, exact: true };
    }
    // Chunks are padded to an even length.
    at += 8 + size + (size % 2);
  }
  return 'a WAV file with no data chunk';
}

/** Kilobits per second by bit-rate index: MPEG-1 layers I, II, III, then MPEG-2/2.5 layer I, then layers II and III. */
const BIT_RATES = [
  [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
] as const;
/** Sample rates by version (MPEG-1, 2, 2.5) and index. */
const SAMPLE_RATES = { 1: [44100, 48000, 32000], 2: [22050, 24000, 16000], 2.5: [11025, 12000, 8000] } as const;
/** Bytes searched for the first frame after the ID3v2 tag (encoders may pad a little). */
const SYNC_SEARCH = 4096;

/** An MPEG audio frame header: what it says, and the frame's length in bytes (0 for a free-format frame). */
interface FrameHeader {
  version: 1 | 2 | 2.5;
  layer: 1 | 2 | 3;
  kbps: number;
  sampleRate: number;
  mono: boolean;
  bytes: number;
}

/** The MPEG audio frame header at the start of `b`, or undefined when `b` holds none there. */
function frameHeader(b: Buffer): FrameHeader | undefined {
  if (b.length < 4 || b[0] !== 0xff || (b[1]! & 0xe0) !== 0xe0) return undefined;
  const versionBits = (b[1]! >> 3) & 3;
  const layerBits = (b[1]! >> 1) & 3;
  const rateIndex = b[2]! >> 4;
  const srIndex = (b[2]! >> 2) & 3;
  if (versionBits === 1 || layerBits === 0 || rateIndex === 15 || srIndex === 3) return undefined;
  const version = versionBits === 3 ? 1 : versionBits === 2 ? 2 : 2.5;
  const layer = (4 - layerBits) as 1 | 2 | 3;
  const table = version === 1 ? BIT_RATES[layer - 1]! : BIT_RATES[layer === 1 ? 3 : 4]!;
  const kbps = table[rateIndex]!;
  const sampleRate = SAMPLE_RATES[version][srIndex]!;
  const padding = (b[2]! >> 1) & 1;
  // The frame length of the MPEG audio spec (ISO/IEC 11172-3, 13818-3): layer I in 4-byte slots.
  const perSlot = layer === 1 ? 12 : layer === 3 && version !== 1 ? 72 : 144;
  const bytes = layer === 1 ? (Math.floor((perSlot * kbps * 1000) / sampleRate) + padding) * 4 : Math.floor((perSlot * kbps * 1000) / sampleRate) + padding;
  return { version, layer, kbps, sampleRate, mono: b[3]! >> 6 === 3, bytes };
}

/**
 * Whether a frame header at byte `at` of the audio is a real one: the next frame's header follows where its length
 * says (when the data goes that far), as decoders check, so two bytes of other data that look like a sync are not
 * taken for a frame.
 */
function confirmedFrame(data: string, total: number, at: number, header: FrameHeader): boolean {
  const next = at + header.bytes;
  if (header.bytes === 0 || next + 4 > total) return true;
  return frameHeader(bytesAt(data, next, next + 4)) !== undefined;
}

function readMp3(data: string): AudioHeader | string {
  const total = base64ByteLength(data);
  let start = 0;
  const id3 = bytesAt(data, 0, 10);
  if (id3.length === 10 && id3.toString('latin1', 0, 3) === 'ID3') {
    // The tag's size is "syncsafe": 7 bits a byte; a footer adds 10 bytes.
    const size = (id3[6]! << 21) | (id3[7]! << 14) | (id3[8]! << 7) | id3[9]!;
    start = 10 + size + (id3[5]! & 0x10 ? 10 : 0);
  }
  const window = bytesAt(data, start, start + SYNC_SEARCH);
  let offset = -1;
  for (let i = 0; i + 4 <= window.length; i++) {
    if (window[i] !== 0xff) continue;
    const candidate = frameHeader(window.subarray(i));
    if (candidate !== undefined && confirmedFrame(data, total, start + i, candidate)) {
      offset = i;
      break;
    }
  }
  if (offset < 0) return 'not an MP3 file (no MPEG audio frame header)';
  const frame = window.subarray(offset);
  const header = frameHeader(frame)!;
  const samplesPerFrame = header.layer === 1 ? 384 : header.layer === 3 && header.version !== 1 ? 576 : 1152;
  const frames = vbrFrameCount(frame, header.version, header.mono);
  if (frames !== undefined) return { seconds: (frames * samplesPerFrame) / header.sampleRate, exact: true };
  if (header.kbps === 0) return 'a free-format MP3 (no bit rate in its frame header and no Xing/Info header)';
  return { seconds: ((total - start - offset) * 8) / (header.kbps * 1000), exact: false };
}

/** The frame count of a Xing/Info (after the side information) or VBRI (32 bytes in) header in the first frame. */
function vbrFrameCount(frame: Buffer, version: 1 | 2 | 2.5, mono: boolean): number | undefined {
  const xing = 4 + (version === 1 ? (mono ? 17 : 32) : mono ? 9 : 17);
  const tag = frame.toString('latin1', xing, xing + 4);
  if ((tag === 'Xing' || tag === 'Info') && frame.length >= xing + 12 && (frame.readUInt32BE(xing + 4) & 1) === 1) return frame.readUInt32BE(xing + 8);
  if (frame.toString('latin1', 36, 40) === 'VBRI' && frame.length >= 36 + 18) return frame.readUInt32BE(36 + 14);
  return undefined;
}
