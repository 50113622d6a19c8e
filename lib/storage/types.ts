/** Object storage port (S3 in production, files under DATA_DIR/files when embedded). */
export interface StoredObject {
  body: ReadableStream<Uint8Array>
  size: number
  contentType: string
}

export interface Storage {
  put(key: string, body: Uint8Array | ArrayBuffer, contentType: string): Promise<void>
  get(key: string): Promise<StoredObject | null>
  delete(key: string): Promise<void>
}
