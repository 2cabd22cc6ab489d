/** A base64 data URL of an image or audio (its data up to the first character that is not base64). */
const MEDIA_DATA_URL = /(data:(image|audio)\/[a-z0-9.+-]{1,20};base64,)[A-Za-z0-9+/=]+/gi;
/**
 * An `input_audio` part's `data` as a server may quote it back: JSON (`"data": "…"`, or `\"data\": \"…` inside a
 * JSON error message) or a Python repr (`'data': '…'`, as a validation error prints the request), its base64 of 16
 * characters or more.
 */
const AUDIO_DATA_FIELD = /(\\?["']data\\?["']\s*:\s*\\?["'])[A-Za-z0-9+/=]{16,}/g;

/**
 * `text` with the bytes of every image or audio data URL replaced by `[image data]` or `[audio data]`, and those of
 * every quoted `input_audio` data field by `[audio data]`: a server that quotes the request's media in an error (an
 * invalid image or audio file, a prompt too long) must not put their bytes into records, logs or reports.
 */
export function hideMediaData(text: string): string {
  let out = text.includes('data:') ? text.replace(MEDIA_DATA_URL, (_, head: string, kind: string) => `${head}[${kind.toLowerCase()} data]`) : text;
  if (out.includes('data')) out = out.replace(AUDIO_DATA_FIELD, '$1[audio data]');
  return out;
}
