import type { Config } from '../../../lib/config'
import { S3Storage } from './s3'
import { notConfigured } from '../../../lib/services/managed'

/** Any S3-compatible bucket (`S3_ENDPOINT` for non-AWS stores). */
export const s3Store = (config: Config) =>
  new S3Storage({
    bucket: config.S3_BUCKET ?? notConfigured('Storage'),
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    callTimeoutMs: config.S3_TIMEOUT_MS,
  })
