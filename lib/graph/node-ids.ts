// What a node id may be. Apart from schema.ts (and free of zod) so the editor checks a rename by the same rules
// without loading zod.

export const NODE_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/;

/**
 * Ids a node may not take. `item` is the contract's per-element root in templates and expressions, and
 * `unsubscribeUrl` is reserved like it (OUTPUT bodies may write {{unsubscribeUrl}}). `__proto__`,
 * `constructor` and `prototype` are refused because engines and UIs key plain objects by node id, and
 * `obj["__proto__"] = …` would replace a prototype instead of storing an output.
 */
export const RESERVED_NODE_IDS: readonly string[] = ["item", "unsubscribeUrl", "__proto__", "constructor", "prototype"];
