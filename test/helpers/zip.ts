// A minimal ZIP reader for tests: lists the entries of an archive (an .xlsx is one) and inflates them, so a test can
// search the text a spreadsheet really holds instead of its compressed bytes.
import { inflateRawSync } from 'node:zlib';

/** One file inside a ZIP archive, decompressed. */
export interface ZipEntry {
  name: string;
  data: Buffer;
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;

/**
 * Reads every entry of a ZIP archive through its central directory (sizes there are right even when the writer
 * streamed with data descriptors). Supports stored (0) and deflated (8) entries; throws on anything else.
 */
export function readZipEntries(archive: Buffer): ZipEntry[] {
  let eocd = -1;
  for (let i = archive.length - 22; i >= Math.max(0, archive.length - 22 - 65_535); i--) {
    if (archive.readUInt32LE(i) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a ZIP archive: no end of central directory');
  const count = archive.readUInt16LE(eocd + 10);
  let at = archive.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (archive.readUInt32LE(at) !== CENTRAL_SIGNATURE) throw new Error(`bad central directory entry at ${at}`);
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const localOffset = archive.readUInt32LE(at + 42);
    const name = archive.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (archive.readUInt32LE(localOffset) !== LOCAL_SIGNATURE) throw new Error(`bad local header for ${name}`);
    const dataStart = localOffset + 30 + archive.readUInt16LE(localOffset + 26) + archive.readUInt16LE(localOffset + 28);
    const raw = archive.subarray(dataStart, dataStart + compressedSize);
    if (method === 0) entries.push({ name, data: Buffer.from(raw) });
    else if (method === 8) entries.push({ name, data: inflateRawSync(raw) });
    else throw new Error(`${name}: unsupported compression method ${method}`);
  }
  return entries;
}
