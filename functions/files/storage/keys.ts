/**
 * The keys every Storage adapter accepts: `/`-separated segments, none empty, `.` or `..`, no backslash or NUL.
 * Both adapters refuse anything else the same way, so a key that could name a path outside the store (a file
 * outside the local root, a URL path S3 would normalise) never reaches one.
 */
export function assertValidKey(key: string): void {
  const bad =
    typeof key !== 'string' ||
    key === '' ||
    key.includes('\\') ||
    key.includes('\0') ||
    key.split('/').some((s) => s === '' || s === '.' || s === '..')
  if (bad) throw new Error(`Storage: invalid key ${JSON.stringify(key)}`)
}
