import "server-only";
import type { Readable } from "node:stream";
import busboy from "busboy";
import { AppError } from "@/lib/errors";
import { formatBytes } from "@/lib/http/route";

/** Room for the multipart envelope (boundaries, part headers) around a file of the maximum size. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export type ReceivedFileInfo = { filename: string; mimeType: string };
export type FileConsumer<T> = (bytes: AsyncIterable<Uint8Array>, info: ReceivedFileInfo) => Promise<T>;

export type ReceiveOptions = { fieldName: string; maxBytes: number };

const tooLarge = (maxBytes: number) =>
  new AppError("payload_too_large", `The file is larger than ${formatBytes(maxBytes)}.`);

/**
 * Streams one file field of a multipart body into `consume` without buffering it: the declared length is checked
 * before reading, and the bytes are counted while streaming, so an oversized upload is refused with 413 whether or
 * not it declares its length. Resolves only after `consume` has settled, so a refused upload never leaves a
 * half-finished write behind the response.
 */
export async function receiveMultipartFile<T>(req: Request, options: ReceiveOptions, consume: FileConsumer<T>): Promise<T> {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType) && !/^multipart\/form-data\s*$/i.test(contentType)) {
    throw new AppError(
      "unsupported_media_type",
      `Send the CSV as multipart/form-data with the file in the field "${options.fieldName}" (server-side paths are not accepted).`,
    );
  }
  const bodyLimit = options.maxBytes + MULTIPART_OVERHEAD_BYTES;
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > bodyLimit) throw tooLarge(options.maxBytes);
  if (!req.body) throw missingFile(options.fieldName);
  return new MultipartReception(req, contentType, options, consume).run();
}

function missingFile(fieldName: string) {
  return new AppError("missing_file", `The multipart body has no file field named "${fieldName}".`);
}

class MultipartReception<T> {
  private failure: unknown;
  private readonly aborted = new AbortController();
  private fileStream: Readable | undefined;
  private consumer: Promise<T> | undefined;
  private readonly parser: busboy.Busboy;
  private readonly parsed: Promise<void>;
  /** Settles once, when `fail` runs: every wait races it so nothing hangs after a failure. */
  private readonly abortedPromise: Promise<void>;

  constructor(
    private readonly req: Request,
    contentType: string,
    private readonly options: ReceiveOptions,
    private readonly consume: FileConsumer<T>,
  ) {
    this.abortedPromise = new Promise((resolve) => this.aborted.signal.addEventListener("abort", () => resolve(), { once: true }));
    try {
      this.parser = busboy({
        headers: { "content-type": contentType },
        defParamCharset: "utf8",
        limits: { files: 1, fields: 20, fieldSize: 64 * 1024, parts: 40, headerPairs: 50 },
      });
    } catch {
      throw new AppError("bad_request", "The multipart body has no boundary in its Content-Type.");
    }
    this.parsed = new Promise<void>((resolve) => {
      this.parser.on("close", resolve);
      this.parser.on("error", () => {
        this.fail(new AppError("bad_request", "The multipart body is malformed or ended early."));
        resolve();
      });
    });
    this.parser.on("file", (name, stream, info) => this.onFile(name, stream, info));
  }

  async run(): Promise<T> {
    await this.pump();
    await Promise.race([this.parsed, this.whenAborted()]);
    if (!this.consumer && this.failure === undefined) this.fail(missingFile(this.options.fieldName));
    let consumerError: unknown;
    const result = this.consumer
      ? await this.consumer.catch((error: unknown) => {
          consumerError = error;
          this.fail(error);
        })
      : undefined;
    // The consumer's own verdict (invalid_csv, 413) is the real cause; the stream errors it set off by stopping are not.
    if (consumerError instanceof AppError) throw consumerError;
    if (this.failure !== undefined) throw this.failure;
    return result as T;
  }

  private onFile(name: string, stream: Readable, info: { filename?: string; mimeType: string }) {
    if (name !== this.options.fieldName || this.consumer) {
      stream.resume(); // not ours: drain it (its bytes still count toward the body limit)
      return;
    }
    this.fileStream = stream;
    // Listen at once: busboy can fail the file stream before the consumer starts reading it.
    stream.on("error", () => this.fail(new AppError("bad_request", "The multipart body is malformed or ended early.")));
    const info2 = { filename: info.filename ?? "", mimeType: info.mimeType };
    this.consumer = this.consume(this.countedBytes(stream), info2);
    this.consumer.catch((error: unknown) => this.fail(error));
  }

  /** The file's bytes, refused past the limit (busboy's own limit would only truncate silently). */
  private async *countedBytes(stream: Readable): AsyncIterable<Uint8Array> {
    let total = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (this.failure !== undefined) throw this.failure;
      total += chunk.length;
      if (total > this.options.maxBytes) throw tooLarge(this.options.maxBytes);
      yield chunk;
    }
    // A stream that was failed before or while it was read may simply end: never let that look like a whole file.
    if (this.failure !== undefined) throw this.failure;
  }

  /** Copies the request body into busboy, respecting its backpressure, and stops at the body limit. */
  private async pump(): Promise<void> {
    const reader = this.req.body!.getReader();
    const limit = this.options.maxBytes + MULTIPART_OVERHEAD_BYTES;
    let total = 0;
    try {
      while (!this.aborted.signal.aborted) {
        const { done, value } = await reader.read();
        if (done) {
          this.parser.end();
          return;
        }
        if (this.aborted.signal.aborted) return;
        total += value.byteLength;
        if (total > limit) {
          this.fail(tooLarge(this.options.maxBytes));
          return;
        }
        if (!this.parser.write(value)) await this.whenDrained();
      }
    } catch (error) {
      this.fail(this.failure ?? new AppError("bad_request", "The request body could not be read.", { cause: error }));
    } finally {
      if (this.aborted.signal.aborted) await reader.cancel().catch(() => {});
    }
  }

  private whenDrained(): Promise<void> {
    return Promise.race([new Promise<void>((resolve) => this.parser.once("drain", resolve)), this.whenAborted()]);
  }

  private whenAborted(): Promise<void> {
    return this.abortedPromise;
  }

  /** Records the first failure and stops everything: reading, multipart parsing, and the consumer's input. */
  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.aborted.abort();
    this.fileStream?.destroy(error instanceof Error ? error : new Error("aborted"));
    this.parser.destroy();
  }
}
