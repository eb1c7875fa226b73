// Host keys as the inventory pins them ("ssh-ed25519 AAAA…"), compared by their key blob so that a comment or
// spacing in the pinned text does not matter.

/** The SSH wire-format key blob as "type base64"; the type is the blob's first string. */
export function formatHostKey(blob: Buffer): string {
  const typeLength = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
  const type = typeLength > 0 && 4 + typeLength <= blob.length ? blob.subarray(4, 4 + typeLength).toString('latin1') : 'unknown';
  return `${type} ${blob.toString('base64')}`;
}

/** True when the pinned "type base64 [comment]" names exactly this blob (type included, since the blob holds it). */
export function matchesPinnedKey(pinned: string, blob: Buffer): boolean {
  const [type, base64] = pinned.trim().split(/\s+/);
  if (type === undefined || base64 === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return false;
  return formatHostKey(blob).split(' ')[0] === type && Buffer.from(base64, 'base64').equals(blob);
}
