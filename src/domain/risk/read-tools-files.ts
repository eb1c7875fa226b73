// Read-only option tables for tools that show files, their contents and their metadata (GNU coreutils, util-linux,
// file, less). Each line is checked against the tool's --help on Debian; what is left out writes, runs a program or
// changes an attribute, and is named beside the table.
import type { OptionTable } from './option-table.ts';
import type { Word } from './parse.ts';
import { isSink } from './sinks.ts';

const HELP = 'help version';

/** `+cmd` runs a pager command (`less '+!sh'`); a word only known at run time could be one. */
function noPagerCommands(operands: readonly Word[]): string | undefined {
  const bad = operands.find((w) => w.value === undefined || w.value.startsWith('+'));
  return bad === undefined ? undefined : `${bad.text} could be a pager command`;
}

const DD_READS = ['if', 'bs', 'ibs', 'obs', 'cbs', 'count', 'skip', 'iseek', 'iflag', 'conv', 'status'];

/** dd's operands are `key=value`; those that only say what to read and how to print it read. */
function ddOperands(operands: readonly Word[]): string | undefined {
  const bad = operands.find((w) => w.value === undefined || !DD_READS.includes(w.value.split('=')[0] ?? '') || !w.value.includes('='));
  return bad === undefined ? undefined : `${bad.text} is not an operand known to only read`;
}

const CHECKSUM: OptionTable = {
  short: 'bctzw',
  long: `binary check tag text zero ignore-missing quiet status strict warn ${HELP}`,
  everyOptionReads: true,
};

const DECOMPRESS: OptionTable = {
  // Left out: gzip's -k/-S and anything beyond decompressing to stdout.
  short: 'flqrtvhV',
  long: `force list quiet recursive test verbose ${HELP}`,
  everyOptionReads: true,
};

export const FILE_TOOLS: Readonly<Record<string, OptionTable>> = {
  ls: {
    short: 'aAbBcCdDfFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ1',
    long: `all almost-all author escape block-size= ignore-backups color=? directory dired classify=? file-type format=
      full-time group-directories-first no-group human-readable si dereference-command-line
      dereference-command-line-symlink-to-dir hide= hyperlink=? indicator-style= inode ignore= kibibytes dereference
      numeric-uid-gid literal hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size
      sort= time= time-style= tabsize= width= context zero ${HELP}`,
    everyOptionReads: true,
  },
  cat: { short: 'AbeEnstTuv', long: `show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting ${HELP}`, everyOptionReads: true },
  tac: { short: 'brs:', long: `before regex separator= ${HELP}`, everyOptionReads: true },
  rev: { short: 'hV0', long: 'help version zero', everyOptionReads: true },
  nl: {
    short: 'b:d:f:h:i:l:n:ps:v:w:',
    long: `body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= join-blank-lines=
      number-format= no-renumber number-separator= starting-line-number= number-width= ${HELP}`,
    everyOptionReads: true,
  },
  head: { short: 'c:n:qvz', long: `bytes= lines= quiet silent verbose zero-terminated ${HELP}`, numeric: true, everyOptionReads: true },
  tail: {
    short: 'c:fFn:qs:vz',
    long: `bytes= follow=? lines= max-unchanged-stats= pid= quiet silent retry sleep-interval= verbose zero-terminated ${HELP}`,
    numeric: true,
    everyOptionReads: true,
  },
  // Left out: -k/--lesskey-file, -o/-O log files, -t/-T tag files, -P prompts, --lesskey-*: and every `+cmd`.
  less: {
    short: 'aAbBcCdeEfFgGiIjJKLmMnNqQrRsSuUVwWxXz~',
    long: 'quit-at-eof QUIT-AT-EOF force quit-if-one-screen ignore-case IGNORE-CASE no-lessopen long-prompt line-numbers LINE-NUMBERS quiet QUIET silent SILENT raw-control-chars RAW-CONTROL-CHARS squeeze-blank-lines chop-long-lines no-init tilde help version',
    operands: noPagerCommands,
  },
  more: { short: 'dflcpsun:', long: `silent logical no-pause print-over clean-print squeeze plain lines= ${HELP}`, operands: noPagerCommands },
  stat: { short: 'Lfc:t', long: `dereference file-system cached= format= printf= terse ${HELP}`, everyOptionReads: true },
  file: {
    // Left out: -C/--compile (writes a .mgc file), -p/--preserve-date (rewrites access times), -z/-Z (may run
    // external decompressors), -S/--no-sandbox.
    short: 'bcde:f:F:hikLlm:nN0Prsv',
    long: `brief checking-printout debug exclude= exclude-quiet= files-from= separator= no-dereference mime keep-going
      dereference list magic-file= no-buffer no-pad print0 parameter= raw special-files mime-type mime-encoding apple
      extension ${HELP}`,
  },
  readlink: { short: 'femnqsvz', long: `canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero ${HELP}`, everyOptionReads: true },
  realpath: {
    short: 'emLPqsz',
    long: `canonicalize-existing canonicalize-missing logical physical quiet relative-to= relative-base= strip no-symlinks zero ${HELP}`,
    everyOptionReads: true,
  },
  basename: { short: 'as:z', long: `multiple suffix= zero ${HELP}`, everyOptionReads: true },
  dirname: { short: 'z', long: `zero ${HELP}`, everyOptionReads: true },
  pwd: { short: 'LP', long: HELP, everyOptionReads: true },
  namei: { short: 'xmolnvhV', long: 'mountpoints modes owners long nosymlinks vertical help version', everyOptionReads: true },
  lsattr: { short: 'RVadlpv', everyOptionReads: true },
  getfacl: {
    short: 'acdeEsRLPtnpv',
    long: `access omit-header default all-effective no-effective skip-base recursive logical physical tabular numeric one-file-system absolute-names ${HELP}`,
    everyOptionReads: true,
  },
  tree: {
    // Left out: -o FILE (writes the listing into a file), -R (writes 00Tree.html files).
    short: 'adlfxL:P:I:puUgsDFqNQrtvcSnCAihH:T:J',
    long: 'noreport inodes device dirsfirst du si prune filelimit= timefmt= charset= sort= gitignore info help version matchdirs fromfile ignore-case',
  },
  du: {
    short: '0aB:bcDd:HhkLlmPSst:xX:',
    long: `null all apparent-size block-size= bytes total dereference-args max-depth= human-readable inodes dereference
      count-links no-dereference separate-dirs si summarize threshold= time=? time-style= exclude-from= exclude=
      one-file-system files0-from= ${HELP}`,
    everyOptionReads: true,
  },
  df: {
    short: 'aB:hHiklPt:Tx:v',
    long: `all block-size= human-readable si inodes local no-sync output=? portability sync total type= print-type exclude-type= ${HELP}`,
    everyOptionReads: true,
  },
  findmnt: {
    short: 'smkp::w:AabCcDd:eF:filJlN:nO:o:PRrS:T:M:t:UuvyxhV',
    long: `fstab mtab kernel poll=? timeout= all ascii bytes nocanonicalize canonicalize df direction= evaluate tab-file=
      first-only invert json list task= noheadings options= output= output-all pairs pseudo shadowed submounts raw
      real source= target= tree mountpoint= types= uniq notruncate nofsroot shell verify verbose vfs-all help version`,
    everyOptionReads: true,
  },
  wc: { short: 'cmlLw', long: `bytes chars lines max-line-length words files0-from= total= ${HELP}`, everyOptionReads: true },
  md5sum: CHECKSUM,
  sha1sum: CHECKSUM,
  sha256sum: CHECKSUM,
  sha512sum: CHECKSUM,
  b2sum: { ...CHECKSUM, short: 'bctzwl:', long: `${CHECKSUM.long ?? ''} length=` },
  cksum: { short: 'a:cl:zw', long: `algorithm= check length= tag untagged zero ignore-missing quiet status strict warn base64 raw debug ${HELP}`, everyOptionReads: true },
  od: {
    short: 'A:j:N:S::t:vw::abcdfilosx',
    long: `address-radix= endian= skip-bytes= read-bytes= strings=? format= output-duplicates width=? traditional ${HELP}`,
    everyOptionReads: true,
  },
  hexdump: {
    short: 'bcCdoxL::e:f:n:s:vhV',
    long: 'one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal two-bytes-hex color=? format= format-file= length= skip= no-squeezing help version',
    everyOptionReads: true,
  },
  strings: {
    short: 'adfn:t:woe:sT:hvV',
    long: 'all data print-file-name bytes= radix= include-all-whitespace encoding= unicode= output-separator= target= help version',
  },
  zcat: DECOMPRESS,
  bzcat: { short: 'sqvhVL', long: `small quiet verbose ${HELP}`, everyOptionReads: true },
  xzcat: { short: 'qvQhHVT:M:', long: `quiet verbose no-warn threads= memlimit= single-stream no-sparse ${HELP}`, everyOptionReads: true },
  zstdcat: { short: 'qvfhVT:M:', long: `quiet verbose force threads= memory= ${HELP}`, everyOptionReads: true },
  diff: {
    short: 'qscC:uU:enyW:pF:ltTrNx:X:S:iEZbwBI:aD:dv',
    long: `normal brief report-identical-files context=? unified=? ed rcs side-by-side width= left-column
      suppress-common-lines show-c-function show-function-line= label= expand-tabs initial-tab tabsize=
      suppress-blank-empty paginate recursive no-dereference new-file unidirectional-new-file ignore-file-name-case
      no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= ignore-case
      ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines
      ignore-matching-lines= text strip-trailing-cr ifdef= minimal horizon-lines= speed-large-files color=? palette=
      ${HELP}`,
    everyOptionReads: true,
  },
  cmp: { short: 'bi:ln:sv', long: 'print-bytes ignore-initial= verbose bytes= quiet silent help version', everyOptionReads: true },
  comm: { short: '123z', long: `check-order nocheck-order output-delimiter= total zero-terminated ${HELP}`, everyOptionReads: true },
  // Left out: of=, seek=, oseek=, oflag= (they only matter when writing a file, and of= is dd-write).
  dd: { long: HELP, operands: ddOperands },
  tee: {
    short: 'aip',
    long: `append ignore-interrupts output-error=? ${HELP}`,
    operands: (operands) => {
      const file = operands.find((w) => w.value === undefined || !isSink(w.value));
      return file === undefined ? undefined : `tee writes into ${file.text}`;
    },
  },
};
