import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

/**
 * Reads a request body into memory, never more than `limit` bytes of it: a declared length over the
 * limit is refused before a byte is read, and a compressed body is refused as soon as what it
 * inflates to passes the limit (a gzip bomb costs at most `limit` bytes of memory).
 */

/** The body is larger than the limit, as sent or once inflated. */
export class BodyTooLarge extends Error {
  constructor() {
    super('request body over the size limit');
  }
}

/** The client went away before the whole body arrived; there is nobody to answer. */
export class BodyAborted extends Error {
  constructor() {
    super('request body aborted');
  }
}

/** A declared Content-Length over the limit: known before reading, and before any 100 Continue. */
export function declaredTooLarge(req: IncomingMessage, limit: number): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > limit;
}

function inflaterFor(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      // identity, or an encoding we cannot undo: the bytes as sent, as ASP.NET reads any body.
      return null;
  }
}

/** Collects a stream's bytes, failing once more than `limit` have come. */
function collect(stream: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stream.removeAllListeners('data');
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => resolve(Buffer.concat(chunks, size)));
    stream.once('error', reject);
  });
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  if (declaredTooLarge(req, limit)) throw new BodyTooLarge();
  // Read already, by a body parser an Express app runs before the mount: waiting for it would hang.
  if (req.readableEnded)
    throw new Error('the request body was read before the service could read it: mount the service before any body parser');
  const aborted = new Promise<never>((_, reject) => {
    req.once('close', () => {
      if (!req.complete) reject(new BodyAborted());
    });
  });
  aborted.catch(() => undefined);

  const raw = await Promise.race([collect(req, limit), aborted]).catch((e: unknown) => {
    throw e instanceof BodyTooLarge ? e : new BodyAborted();
  });
  const inflater = inflaterFor(req.headers['content-encoding']);
  if (inflater === null) return raw;
  try {
    return await collect(inflater.end(raw), limit);
  } catch (e) {
    if (e instanceof BodyTooLarge) {
      inflater.destroy();
      throw e;
    }
    // Not the compressed data it claims to be: the bytes as sent (read as ASP.NET would read them).
    return raw;
  }
}
