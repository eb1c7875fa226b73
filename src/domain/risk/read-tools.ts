// The tools that only read when every option they are given is on their table (one table per tool, in the files
// named below), and find's expression, whose tests and actions are options of their own.
import type { Invocation } from './args.ts';
import type { Judgement } from './judgement.ts';
import { byTable } from './judgement.ts';
import type { OptionTable } from './option-table.ts';
import { FILE_TOOLS } from './read-tools-files.ts';
import { NET_TOOLS } from './read-tools-net.ts';
import { SYSTEM_TOOLS } from './read-tools-system.ts';
import { TEXT_TOOLS } from './read-tools-text.ts';

const FIND: OptionTable = {
  // Left out: -exec/-execdir/-ok/-okdir (find is then a wrapper, and find-exec counts), -delete, -fprint*, -fls.
  words: `H L P name= iname= path= ipath= wholename= iwholename= regex= iregex= regextype= lname= ilname= type= xtype=
    size= user= group= uid= gid= nouser nogroup perm= mtime= mmin= atime= amin= ctime= cmin= used= newer= anewer= cnewer=
    newermt= newerat= newerct= newermm= newerma= newermc= newerBt= newerBm= samefile= links= inum= fstype= context=
    empty executable readable writable true false maxdepth= mindepth= depth mount xdev noleaf follow
    ignore_readdir_race noignore_readdir_race daystart warn nowarn files0-from= print print0 printf= ls prune quit not
    a and o or help version`,
};

export const READ_TOOL_TABLES: ReadonlyMap<string, OptionTable> = new Map(
  Object.entries({ ...FILE_TOOLS, ...TEXT_TOOLS, ...SYSTEM_TOOLS, ...NET_TOOLS, find: FIND }),
);

/** How a read-only tool is judged by its table, or undefined for a command that has none. */
export function judgeReadTool(inv: Invocation): Judgement | undefined {
  const table = inv.name === undefined ? undefined : READ_TOOL_TABLES.get(inv.name);
  return table === undefined ? undefined : byTable(inv.args, table);
}
