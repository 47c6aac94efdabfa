// Recursive-descent parser of the expression language (grammar in expressions.ts): tokens → AST.
import { ExpressionSyntaxError } from "./expression-errors";
import { Lexer, unexpected, type Token } from "./expression-lexer";

/** A root name used by an expression: `member` when followed by `.` or `[` (so it may name a node). */
export type ExpressionReference = { name: string; member: boolean; position: number; field?: string };

export const EXPRESSION_HELPERS = ["contains", "startsWith", "endsWith", "lower", "upper", "len"] as const;

/**
 * Words that are JavaScript's ways out of a sandbox. No lookup here could reach anything through them (every
 * read is an own-property read), but refusing them at save time gives the clearest answer. Ordinary words that
 * are also JavaScript keywords (`class`, `return`, `module`…) stay usable: they are plausible CSV column names.
 */
export const RESERVED_WORDS: readonly string[] = [
  "with", "Function", "function", "this", "import", "constructor", "__proto__", "prototype", "new", "eval",
  "globalThis", "require",
];

const MAX_DEPTH = 64;

export type ExpressionNode =
  | { type: "literal"; value: unknown }
  | { type: "list"; items: ExpressionNode[] }
  | { type: "name"; name: string; member: boolean; position: number }
  | { type: "member"; object: ExpressionNode; key: string }
  | { type: "index"; object: ExpressionNode; index: ExpressionNode }
  | { type: "call"; helper: Helper; args: ExpressionNode[] }
  | { type: "unary"; op: "!" | "-" | "+"; operand: ExpressionNode }
  | { type: "binary"; op: string; left: ExpressionNode; right: ExpressionNode };

export type Helper = (typeof EXPRESSION_HELPERS)[number];
const HELPER_ARITY: Record<Helper, number> = { contains: 2, startsWith: 2, endsWith: 2, lower: 1, upper: 1, len: 1 };

export class Parser {
  private index = 0;
  private depth = 0;
  readonly references: ExpressionReference[] = [];

  constructor(
    private readonly source: string,
    private readonly lexer: Lexer,
  ) {}

  parse(): ExpressionNode {
    const node = this.or();
    if (this.peek().kind !== "end") this.fail(this.peek());
    return node;
  }

  private peek(offset = 0): Token {
    return this.lexer.at(this.index + offset);
  }

  private next(): Token {
    return this.lexer.at(this.index++);
  }

  private isOp(value: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.kind === "op" && token.value === value;
  }

  private isWord(value: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.kind === "name" && token.value === value;
  }

  private expectOp(value: string): void {
    if (!this.isOp(value)) this.fail(this.peek());
    this.index++;
  }

  private fail(token: Token): never {
    unexpected(this.source, token.position);
  }

  private nested<T>(parse: () => T): T {
    if (++this.depth > MAX_DEPTH) {
      throw new ExpressionSyntaxError(`Expression is nested too deeply at position ${this.peek().position}`, this.peek().position);
    }
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private or(): ExpressionNode {
    return this.nested(() => {
      let left = this.and();
      while (this.isOp("||") || this.isWord("or")) {
        this.index++;
        left = { type: "binary", op: "||", left, right: this.and() };
      }
      return left;
    });
  }

  private and(): ExpressionNode {
    let left = this.not();
    while (this.isOp("&&") || this.isWord("and")) {
      this.index++;
      left = { type: "binary", op: "&&", left, right: this.not() };
    }
    return left;
  }

  private not(): ExpressionNode {
    if (this.isWord("not")) {
      this.index++;
      return this.nested(() => ({ type: "unary", op: "!", operand: this.not() }));
    }
    return this.compare();
  }

  private compare(): ExpressionNode {
    const left = this.sum();
    const op = this.compareOp();
    if (!op) return left;
    const node: ExpressionNode = { type: "binary", op, left, right: this.sum() };
    if (this.compareOp(true)) {
      const token = this.peek();
      throw new ExpressionSyntaxError(
        `Unexpected "${token.value}" at position ${token.position}: comparisons cannot be chained, join them with &&`,
        token.position,
      );
    }
    return node;
  }

  /** Consumes a comparison operator and returns it (`not in` as "notin"); with `peekOnly` consumes nothing. */
  private compareOp(peekOnly = false): string | undefined {
    const token = this.peek();
    let op: string | undefined;
    let width = 1;
    if (token.kind === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(token.value)) op = token.value;
    else if (this.isWord("in")) op = "in";
    else if (this.isWord("not") && this.isWord("in", 1)) [op, width] = ["notin", 2];
    if (op && !peekOnly) this.index += width;
    return op;
  }

  private sum(): ExpressionNode {
    let left = this.product();
    while (this.isOp("+") || this.isOp("-")) {
      const op = this.next().value;
      left = { type: "binary", op, left, right: this.product() };
    }
    return left;
  }

  private product(): ExpressionNode {
    let left = this.unary();
    while (this.isOp("*") || this.isOp("/") || this.isOp("%")) {
      const op = this.next().value;
      left = { type: "binary", op, left, right: this.unary() };
    }
    return left;
  }

  private unary(): ExpressionNode {
    if (this.isOp("!") || this.isOp("-") || this.isOp("+")) {
      const op = this.next().value as "!" | "-" | "+";
      return this.nested(() => ({ type: "unary", op, operand: this.unary() }));
    }
    return this.postfix();
  }

  private postfix(): ExpressionNode {
    let node = this.primary();
    for (;;) {
      if (this.isOp(".")) {
        this.index++;
        const token = this.next();
        if (token.kind !== "name") this.fail(token);
        this.checkNotReserved(token);
        if (this.isOp("(")) node = this.call(token, [node]);
        else node = { type: "member", object: node, key: token.value };
      } else if (this.isOp("[")) {
        this.index++;
        const index = this.or();
        this.expectOp("]");
        node = { type: "index", object: node, index };
      } else if (this.isOp("(")) {
        const token = this.peek();
        throw new ExpressionSyntaxError(
          `Unexpected "(" at position ${token.position}: only ${EXPRESSION_HELPERS.join(", ")} can be called`,
          token.position,
        );
      } else {
        return node;
      }
    }
  }

  private primary(): ExpressionNode {
    const token = this.next();
    switch (token.kind) {
      case "number":
      case "string":
        return { type: "literal", value: token.literal };
      case "name":
        return this.word(token);
      case "op":
        if (token.value === "(") {
          const inner = this.or();
          this.expectOp(")");
          return inner;
        }
        if (token.value === "[") return this.list();
        return this.fail(token);
      default:
        return this.fail(token);
    }
  }

  private word(token: Token): ExpressionNode {
    const word = token.value;
    if (word === "true" || word === "false") return { type: "literal", value: word === "true" };
    if (word === "null") return { type: "literal", value: null };
    if (["and", "or", "not", "in"].includes(word)) this.fail(token);
    this.checkNotReserved(token);
    if (this.isOp("(")) return this.call(token, []);
    const member = this.isOp(".") || this.isOp("[");
    // `name.field`: the first field read from it (save-time checks compare item fields with the known columns).
    const after = this.isOp(".") ? this.peek(1) : undefined;
    this.references.push(after?.kind === "name" ? { name: word, member, position: token.position, field: after.value } : { name: word, member, position: token.position });
    return { type: "name", name: word, member, position: token.position };
  }

  private checkNotReserved(token: Token): void {
    if (RESERVED_WORDS.includes(token.value)) {
      throw new ExpressionSyntaxError(`"${token.value}" is not allowed (at position ${token.position})`, token.position);
    }
  }

  private call(token: Token, receiver: ExpressionNode[]): ExpressionNode {
    const name = token.value;
    if (!(EXPRESSION_HELPERS as readonly string[]).includes(name)) {
      throw new ExpressionSyntaxError(
        `Unknown function "${name}" at position ${token.position}: only ${EXPRESSION_HELPERS.join(", ")} can be called`,
        token.position,
      );
    }
    this.expectOp("(");
    const args = [...receiver, ...this.commaSeparated(")")];
    const helper = name as Helper;
    if (args.length !== HELPER_ARITY[helper]) {
      const count = HELPER_ARITY[helper];
      throw new ExpressionSyntaxError(
        `${name}() takes ${count} argument${count === 1 ? "" : "s"}, got ${args.length} (at position ${token.position})`,
        token.position,
      );
    }
    return { type: "call", helper, args };
  }

  private list(): ExpressionNode {
    return { type: "list", items: this.commaSeparated("]") };
  }

  private commaSeparated(close: string): ExpressionNode[] {
    const items: ExpressionNode[] = [];
    while (!this.isOp(close)) {
      items.push(this.or());
      if (!this.isOp(close)) this.expectOp(",");
    }
    this.index++;
    return items;
  }
}
