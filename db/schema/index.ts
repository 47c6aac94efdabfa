export * from "./accounts";
export * from "./uploads";
export * from "./workflows";
export * from "./runs";
export * from "./messaging";
export * from "./google";
