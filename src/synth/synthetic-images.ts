import type { Conversation } from '../conversation/types.js';
import type { ContentPart } from '../tokenizer/types.js';
import type { Distribution } from './distributions.js';
import { addMediaParts } from './media-parts.js';
import { encodePng } from './png.js';
import { Rng } from '../util/rng.js';

/** The `images` extension of a generation config: synthetic PNGs put in the user messages. */
export interface ImageSpec {
  /** Images per user message that gets images (rounded, at least 0). */
  numImages: Distribution;
  /** Pixels. */
  width: number;
  height: number;
  /** `first`: only each conversation's first user message (the LLaVA shape); `all`: every user message. */
  turns: 'first' | 'all';
}

/** The random stream of the images, apart from the text's (adding images never changes the generated text). */
const IMAGE_STREAM = 0x696d67;
/** Side of the squares of one colour the pictures are made of (pixels): they compress as pictures do, not as noise. */
const TILE = 8;

/**
 * One synthetic picture as a PNG data URL: tiles of seeded colours with a gradient, so each image differs and its PNG
 * compresses to a realistic size (about 1 byte per pixel at 8-pixel tiles).
 */
export function syntheticPng(width: number, height: number, rng: Rng): string {
  const rgb = new Uint8Array(width * height * 3);
  const tilesX = Math.ceil(width / TILE);
  const colours = new Uint8Array(tilesX * Math.ceil(height / TILE) * 3);
  for (let i = 0; i < colours.length; i++) colours[i] = rng.int(0, 255);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const tile = (Math.floor(y / TILE) * tilesX + Math.floor(x / TILE)) * 3;
      const p = (y * width + x) * 3;
      // A little gradient inside each tile, so rows are not all repeats.
      const shade = (x % TILE) + (y % TILE);
      rgb[p] = (colours[tile]! + shade) & 0xff;
      rgb[p + 1] = (colours[tile + 1]! + shade) & 0xff;
      rgb[p + 2] = colours[tile + 2]!;
    }
  }
  return `data:image/png;base64,${encodePng(width, height, rgb).toString('base64')}`;
}

/**
 * Puts synthetic images at the start of the user messages `spec.turns` names, as image parts before the text (where
 * LLaVA puts them). Deterministic for a seed. The text, and so every token count of the generator, is unchanged.
 */
export function addSyntheticImages(conversations: Conversation[], spec: ImageSpec, seed: number): void {
  const rng = Rng.derive(seed, IMAGE_STREAM);
  const image = (): ContentPart => ({ type: 'image_url', image_url: { url: syntheticPng(spec.width, spec.height, rng) } });
  addMediaParts(conversations, { count: spec.numImages, turns: spec.turns }, rng, image, (content, parts) => [...parts, ...content]);
}
