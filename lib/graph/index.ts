// The graph language: schema, validation, plan, templates and expressions. Pure and client-safe.
export * from "./schema";
export * from "./validate";
export * from "./templates";
export * from "./expressions";
export * from "./plan";
