/** A base64 data URL of an image (its data up to the first character that is not base64). */
const IMAGE_DATA = /(data:image\/[a-z0-9.+-]{1,20};base64,)[A-Za-z0-9+/=]+/gi;

/**
 * `text` with the bytes of every image data URL replaced by `[image data]`: a server that quotes the request's image
 * in an error (an invalid image, a prompt too long) must not put image bytes into records, logs or reports.
 */
export function hideImageData(text: string): string {
  return text.includes('data:') ? text.replace(IMAGE_DATA, '$1[image data]') : text;
}
