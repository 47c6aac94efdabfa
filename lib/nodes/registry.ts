import "server-only";
import type { NodeType } from "@/lib/graph/schema";
import { aiExecutor } from "./ai/execute";
import { dataSourceExecutor } from "./data-source/execute";
import { filterExecutor } from "./filter/execute";
import { outputExecutor } from "./output/execute";
import { triggerExecutor } from "./trigger/execute";
import type { NodeExecutor } from "./types";

/** One executor per node type: the compiler flags a type without one. */
export const nodeExecutors: { [T in NodeType]: NodeExecutor<T> } = {
  TRIGGER: triggerExecutor,
  DATA_SOURCE: dataSourceExecutor,
  AI: aiExecutor,
  FILTER: filterExecutor,
  OUTPUT: outputExecutor,
};
