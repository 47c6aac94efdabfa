// Errors of the expression language, apart so the lexer, parser and evaluator can all throw them.

export class ExpressionSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = "ExpressionSyntaxError";
  }
}

/** A run-time failure (unknown name, wrong type…); the message is a sentence a person can act on. */
export class ExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExpressionError";
  }
}
