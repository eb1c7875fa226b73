// Types for the part of mvdan-sh (a GopherJS build of mvdan.cc/sh/v3/syntax) the risk classifier reads; the package ships none.
declare module 'mvdan-sh' {
  /** A position; offsets count UTF-8 bytes of the source, as in Go. */
  export interface Pos {
    Offset(): number;
  }

  export interface Node {
    Pos(): Pos;
    End(): Pos;
  }

  export interface Lit extends Node {
    Value: string;
  }

  export interface SglQuoted extends Node {
    Value: string;
    Dollar: boolean;
  }

  export interface DblQuoted extends Node {
    Parts: Node[];
    Dollar: boolean;
  }

  export interface Word extends Node {
    Parts: Node[];
  }

  export interface Redirect extends Node {
    Op: number;
    N: Lit | null;
    Word: Word | null;
    Hdoc: Word | null;
  }

  export interface Assign extends Node {
    Name: Lit | null;
    Value: Word | null;
    Naked: boolean;
  }

  export interface CallExpr extends Node {
    Assigns: Assign[];
    Args: Word[];
  }

  export interface DeclClause extends Node {
    Variant: Lit;
    Args: Assign[];
  }

  export interface Stmt extends Node {
    Cmd: Node | null;
    Redirs: Redirect[];
    /** `! cmd`: its exit status is inverted. */
    Negated: boolean;
    /** `cmd &`: the shell goes on at once. */
    Background: boolean;
    Coprocess: boolean;
  }

  export interface File extends Node {
    Stmts: Stmt[];
  }

  /** An option for NewParser, opaque to callers. */
  export interface ParserOption {
    readonly __parserOption: never;
  }

  export interface Parser {
    /** Throws a Go error object (with an `Error()` method) on a syntax error. */
    Parse(src: string, name: string): File;
  }

  export interface Syntax {
    NewParser(...options: ParserOption[]): Parser;
    KeepComments(keep: boolean): ParserOption;
    NodeType(node: Node): string;
    /** Visits every node depth-first; the visitor is called with null after a node's children. */
    Walk(node: Node, visit: (node: Node | null) => boolean): void;
  }

  const sh: { syntax: Syntax };
  export default sh;
}
