import type { Conversation } from '../conversation/types.js';
import type { ContentPart } from '../tokenizer/types.js';
import { sampleMany, type Distribution } from './distributions.js';
import { addMediaParts } from './media-parts.js';
import { encodeWav, sineSamples } from './wav.js';
import { Rng } from '../util/rng.js';

/** The `audio` extension of a generation config: synthetic WAV tones put in the user messages. */
export interface AudioSpec {
  /** Audio parts per user message that gets audio (rounded, at least 0). */
  numAudios: Distribution;
  /** Seconds of each audio part (at least 0). */
  durationSec: Distribution;
  /** Samples per second (16,000: what Whisper-style encoders such as Qwen2-Audio's take). */
  sampleRate: number;
  /** `first`: only each conversation's first user message; `all`: every user message. */
  turns: 'first' | 'all';
}

/** The random stream of the audio, apart from the text's and the images' (adding audio changes neither). */
const AUDIO_STREAM = 0x617564;
/** The tones' frequencies are drawn from this range (Hz): audible, well under any sample rate's Nyquist limit. */
const MIN_HZ = 220;
const MAX_HZ = 880;

/** One synthetic tone as base64 WAV data (an `input_audio` part's `data`): a sine of a seeded frequency. */
export function syntheticWav(seconds: number, sampleRate: number, rng: Rng): string {
  return encodeWav(sineSamples(rng.int(MIN_HZ, MAX_HZ), seconds, sampleRate), sampleRate).toString('base64');
}

/**
 * Puts synthetic audio parts in the user messages `spec.turns` names, before the message's text (after its images,
 * if any). Deterministic for a seed. The text, and so every token count of the generator, is unchanged.
 */
export function addSyntheticAudio(conversations: Conversation[], spec: AudioSpec, seed: number): void {
  const rng = Rng.derive(seed, AUDIO_STREAM);
  const audio = (): ContentPart => {
    const seconds = Math.max(0, sampleMany(spec.durationSec, rng, 1)[0] ?? 0);
    return { type: 'input_audio', input_audio: { data: syntheticWav(seconds, spec.sampleRate, rng), format: 'wav' } };
  };
  addMediaParts(conversations, { count: spec.numAudios, turns: spec.turns }, rng, audio, (content, parts) => {
    const firstText = content.findIndex((p) => p.type === 'text');
    const at = firstText < 0 ? content.length : firstText;
    return [...content.slice(0, at), ...parts, ...content.slice(at)];
  });
}
