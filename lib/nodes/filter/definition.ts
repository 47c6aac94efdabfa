export const filterDefinition = {
  type: "FILTER",
  label: "Filter",
  description: "Keeps the elements of `source` (a template naming an array) for which `expr` is true. Output: { items, count, filteredOut }.",
} as const;
