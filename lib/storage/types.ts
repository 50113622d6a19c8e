/** Object storage port (S3 in production, files under DATA_DIR/files when embedded). */
export interface StoredObject {
  body: ReadableStream<Uint8Array>
  size: number
  contentType: string
}

export interface PutStreamOptions {
  /** The most the body can hold (the caller enforces it): lets S3 size its parts so the count stays within 10,000. */
  maxBytes?: number
}

export interface Storage {
  put(key: string, body: Uint8Array | ArrayBuffer, contentType: string): Promise<void>
  /**
   * Writes a body whose length is not known in advance, holding only a bounded slice of it in memory (local files:
   * one chunk; S3: one multipart part, uniform in size). Resolves with the byte count once the whole object is written and readable.
   * When the stream errors (a cancelled upload, a limit passed) or the store fails, rejects and leaves no object
   * under `key`: nothing half-written is ever readable.
   */
  putStream(key: string, body: ReadableStream<Uint8Array>, contentType: string, opts?: PutStreamOptions): Promise<{ size: number }>
  get(key: string): Promise<StoredObject | null>
  delete(key: string): Promise<void>
}
