// Small helpers of the fleet views: search snippets split into plain and bold parts (rendered as text, never as
// HTML), the words types and states read as, attribute values as one line.
export interface SnippetPart {
  text: string;
  bold: boolean;
}

/** Search snippets mark matches as **bold**. */
export function snippetParts(snippet: string): SnippetPart[] {
  return snippet
    .split('**')
    .map((text, i) => ({ text, bold: i % 2 === 1 }))
    .filter((part) => part.text !== '');
}

/** "lxc" reads as "container" to an operator; the slug keeps the API's word. */
export const TYPE_LABELS = { host: 'Hosts', lxc: 'Containers', vm: 'VMs' } as const;
export const STATE_TONES = { active: 'ok', provisioning: 'warn', destroyed: 'bad' } as const;

/** An attribute's value as one short line: strings as they are, anything else as JSON. */
export function attributeText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Knowledge may be about things outside the inventory (pool:ludo-lvm): only inventory slugs get a link. */
export function isEntitySlug(slug: string): boolean {
  return /^(host|lxc|vm):[A-Za-z0-9._-]{1,63}$/.test(slug);
}
