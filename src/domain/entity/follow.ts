// The inventory follows what runs: a successful `pct create ID … --hostname NAME` on a host adds lxc:NAME
// under it, and a successful `pct destroy ID` marks that container destroyed. Pure: reads the commands the
// classifier unwrapped (so `sudo pct create …` counts too).
import { parseShell } from '../risk/parse.ts';

export type InventoryEffect = { readonly kind: 'created'; readonly pveId: number; readonly hostname: string } | { readonly kind: 'destroyed'; readonly pveId: number };

const HOSTNAME = /^[A-Za-z0-9._-]{1,63}$/;

export function inventoryEffects(innerCommands: readonly string[]): InventoryEffect[] {
  const effects: InventoryEffect[] = [];
  for (const text of innerCommands) {
    const parsed = parseShell(text);
    if (!parsed.ok) continue;
    for (const command of parsed.commands) {
      const argv = command.argv.map((w) => w.value);
      if (argv[0] !== 'pct' || argv[2] === undefined || !/^\d+$/.test(argv[2])) continue;
      const pveId = Number(argv[2]);
      if (argv[1] === 'destroy') effects.push({ kind: 'destroyed', pveId });
      if (argv[1] === 'create') {
        const at = argv.findIndex((a) => a === '--hostname');
        const inline = argv.find((a) => a?.startsWith('--hostname='))?.slice('--hostname='.length);
        const hostname = inline ?? (at >= 0 ? argv[at + 1] : undefined);
        if (hostname !== undefined && HOSTNAME.test(hostname)) effects.push({ kind: 'created', pveId, hostname });
      }
    }
  }
  return effects;
}
