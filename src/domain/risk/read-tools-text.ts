// Read-only option tables for tools that filter or format text (grep, sort, cut, jq, sed, awk, …). What is left out
// writes a file or runs a program, and is named beside the table.
import type { OptionTable } from './option-table.ts';
import type { Word } from './parse.ts';

const HELP = 'help version';

/**
 * Shell builtins and tools whose every argument is only printed, compared or waited on (echo, printf, test, sleep):
 * no word given to them can make them write or run anything.
 */
export const FREE_FORM: OptionTable = { freeForm: true, everyOptionReads: true };

const GREP: OptionTable = {
  short: 'EFGPe:f:iywxzsvVm:bnHhoqaIdD:rRlLcTZB:A:C:U',
  long: `extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case word-regexp
    line-regexp null-data no-messages invert-match max-count= byte-offset line-number no-line-number line-buffered
    with-filename no-filename label= only-matching quiet silent binary-files= text directories= devices= recursive
    dereference-recursive include= exclude= exclude-from= exclude-dir= files-without-match files-with-matches count
    initial-tab null before-context= after-context= context= group-separator= no-group-separator color=? colour=?
    binary ${HELP}`,
  numeric: true,
  everyOptionReads: true,
};

/** uniq's second operand is the file it writes; a word only known at run time could be two. */
function uniqReadsOnly(operands: readonly Word[]): string | undefined {
  if (operands.some((w) => w.value === undefined)) return 'an operand known only at run time could name its output file';
  return operands.length > 1 ? `uniq writes into ${operands[1]?.text ?? 'its second operand'}` : undefined;
}

// mawk's -W takes words of its own; these only print or change how input is read.
const MAWK_W = ['version', 'v', 'interactive', 'i', 'posix_space', 'usage', 'help', 'dump', 'traditional', 'repetitions', 'sprintf'];

/** gawk and mawk together. Left out: -f/-E/-i/-l (a program or extension from a file), -d/-D/-o/-p (write files, debugger). */
const AWK: OptionTable = {
  short: 'F:v:e:bcCgMnNOPrsStVhL::W:',
  long: `field-separator= assign= source= characters-as-bytes traditional copyright gen-pot bignum use-lc-numeric
    non-decimal-data optimize posix re-interval no-optimize sandbox lint=? ${HELP}`,
  values: { '-W': (v) => MAWK_W.includes(v.split('=')[0] ?? '') },
};

export const TEXT_TOOLS: Readonly<Record<string, OptionTable>> = {
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  zgrep: GREP,
  rg: {
    // Left out: --pre/--pre-glob (run a program on each file), -z/--search-zip (runs decompressors), --ignore-file.
    short: 'A:B:C:ce:E:f:FHiIj:lLm:M:nNop0PqsStT:uUvVwxar:bg:',
    long: `files hidden no-ignore no-ignore-vcs glob= iglob= type= type-not= type-list json count count-matches
      files-with-matches files-without-match max-depth= max-count= max-filesize= sort= sortr= stats trim vimgrep
      column context= after-context= before-context= fixed-strings ignore-case smart-case case-sensitive word-regexp
      line-regexp invert-match line-number no-line-number no-heading heading with-filename no-filename only-matching
      color= colors= follow multiline multiline-dotall pcre2 regexp= file= replace= passthru null text binary
      no-messages quiet one-file-system threads= encoding= unrestricted ${HELP}`,
  },
  sort: {
    // Left out: -o/--output (writes), --compress-program (runs a program), -T/--temporary-directory (writes files there).
    short: 'bdfgiMhnRrVcCk:msS:t:uz',
    long: `ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort
      human-numeric-sort numeric-sort random-sort random-source= reverse sort= version-sort batch-size= check=? debug
      files0-from= key= merge stable buffer-size= field-separator= parallel= unique zero-terminated ${HELP}`,
  },
  uniq: {
    short: 'cdDf:is:uzw:',
    long: `count repeated all-repeated=? skip-fields= group=? ignore-case skip-chars= unique zero-terminated check-chars= ${HELP}`,
    operands: uniqReadsOnly,
  },
  cut: { short: 'b:c:d:f:nsz', long: `bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated ${HELP}`, everyOptionReads: true },
  tr: { short: 'cCdst', long: `complement delete squeeze-repeats truncate-set1 ${HELP}`, everyOptionReads: true },
  // jq has no option that writes or runs a program; --arg/--argjson take two words, the second read as an operand.
  jq: {
    short: 'cnesrRCMSjaf:L:h',
    long: `tab indent= arg= argjson= slurpfile= rawfile= args jsonargs seq stream stream-errors ascii-output join-output
      raw-output raw-input null-input compact-output slurp sort-keys color-output monochrome-output exit-status from-file=
      raw-output0 ${HELP}`,
    everyOptionReads: true,
  },
  column: {
    short: 'tn:O:N:l:E:dH:R:T:W:LJr:i:p:c:o:s:xehV',
    long: `table table-name= table-order= table-columns= table-columns-limit= table-noextreme= table-noheadings
      table-header-repeat table-hide= table-right= table-truncate= table-wrap= keep-empty-lines json tree= tree-id=
      tree-parent= output-width= output-separator= separator= fillrows ${HELP}`,
    everyOptionReads: true,
  },
  fold: { short: 'bsw:', long: `bytes spaces width= ${HELP}`, everyOptionReads: true },
  fmt: { short: 'cp:stuw:g:', long: `crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal= ${HELP}`, numeric: true, everyOptionReads: true },
  paste: { short: 'd:sz', long: `delimiters= serial zero-terminated ${HELP}`, everyOptionReads: true },
  join: { short: 'a:e:ij:1:2:o:t:v:z', long: `ignore-case check-order nocheck-order header zero-terminated ${HELP}`, everyOptionReads: true },
  expand: { short: 'it:', long: `initial tabs= ${HELP}`, numeric: true, everyOptionReads: true },
  base64: { short: 'diw:', long: `decode ignore-garbage wrap= ${HELP}`, everyOptionReads: true },
  numfmt: {
    short: 'd:z',
    long: `debug delimiter= field= format= from= from-unit= grouping header=? invalid= padding= round= suffix= to= to-unit= zero-terminated ${HELP}`,
    everyOptionReads: true,
  },
  seq: { short: 'f:s:w', long: `format= separator= equal-width ${HELP}`, numeric: true, everyOptionReads: true },
  expr: FREE_FORM,
  echo: FREE_FORM,
  printf: FREE_FORM,
  true: FREE_FORM,
  false: FREE_FORM,
  test: FREE_FORM,
  '[': FREE_FORM,
  ':': FREE_FORM,
  sleep: FREE_FORM,
  // Left out: -i (in place) and -f (a program from a file): sed.ts judges the program itself.
  sed: {
    short: 'nrEsuzl:e:',
    long: `quiet silent regexp-extended separate unbuffered null-data line-length= expression= posix debug sandbox ${HELP}`,
  },
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
};
