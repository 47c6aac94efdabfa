// Save-time checks of the graph's structure: cycles, reachability from the TRIGGER, ancestors.
import type { EdgeInfo, NodeInfo, Report } from "./validate-references";

/**
 * One `cycle` error per strongly connected component, naming its nodes in the order the edges go round
 * (`"a" → "b" → "c" → "a"`) and pointing at the loop's first edge; the editor draws every edge of the loop.
 */
export function checkCycles(nodes: NodeInfo[], edges: EdgeInfo[], report: Report): void {
  const order = [...new Set(nodes.flatMap((node) => (node.id === undefined ? [] : [node.id])))];
  for (const loop of findCycles(order, edges)) {
    const path = loop.map((index) => edges.find((edge) => edge.index === index)!);
    const names = [...path.map((edge) => edge.source), path[0].source].map((id) => `"${id}"`).join(" → ");
    report("cycle", `graph.edges[${path[0].index}]`, `Nodes ${names} form a cycle; a node cannot depend on itself: remove one of these edges`, path[0].source);
  }
}

/**
 * For each strongly connected component of two or more nodes, one shortest loop through its first node (in `order`):
 * the `index` of each edge, in the order they are followed. Pure, for the editor too.
 */
export function findCycles(order: string[], edges: { index: number; source: string; target: string }[]): number[][] {
  const successors = new Map<string, string[]>();
  for (const edge of edges) successors.set(edge.source, [...(successors.get(edge.source) ?? []), edge.target]);
  const loops: number[][] = [];
  for (const component of stronglyConnected(order, successors)) {
    if (component.length < 2) continue;
    const members = new Set(component);
    const start = order.find((id) => members.has(id))!;
    const inside = edges.filter((edge) => members.has(edge.source) && members.has(edge.target));
    // Breadth-first from `start` until an edge leads back to it.
    const via = new Map<string, (typeof inside)[number]>();
    const queue = [start];
    let closing: (typeof inside)[number] | undefined;
    while (queue.length > 0 && !closing) {
      const at = queue.shift()!;
      for (const edge of inside) {
        if (edge.source !== at) continue;
        if (edge.target === start) {
          closing = edge;
          break;
        }
        if (!via.has(edge.target)) {
          via.set(edge.target, edge);
          queue.push(edge.target);
        }
      }
    }
    if (!closing) continue;
    const loop = [closing.index];
    for (let at = closing.source; at !== start; ) {
      const edge = via.get(at)!;
      loop.unshift(edge.index);
      at = edge.source;
    }
    loops.push(loop);
  }
  return loops;
}

function stronglyConnected(order: string[], successors: Map<string, string[]>): string[][] {
  const indexOf = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of order) {
    if (indexOf.has(start)) continue;
    const work: { id: string; next: number }[] = [{ id: start, next: 0 }];
    indexOf.set(start, counter);
    lowLink.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const targets = successors.get(frame.id) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++];
        if (!indexOf.has(target)) {
          indexOf.set(target, counter);
          lowLink.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ id: target, next: 0 });
        } else if (onStack.has(target)) {
          lowLink.set(frame.id, Math.min(lowLink.get(frame.id)!, indexOf.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].id;
        lowLink.set(parent, Math.min(lowLink.get(parent)!, lowLink.get(frame.id)!));
      }
      if (lowLink.get(frame.id) === indexOf.get(frame.id)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.id);
        components.push(component);
      }
    }
  }
  return components;
}

export function checkReachable(nodes: NodeInfo[], edges: EdgeInfo[], report: Report): void {
  const triggers = nodes.filter((node) => node.type === "TRIGGER" && node.id !== undefined).map((node) => node.id!);
  if (triggers.length === 0) return; // trigger_count already says what is wrong
  const successors = new Map<string, string[]>();
  for (const edge of edges) successors.set(edge.source, [...(successors.get(edge.source) ?? []), edge.target]);
  const reached = new Set(triggers);
  const queue = [...triggers];
  while (queue.length > 0) {
    for (const next of successors.get(queue.shift()!) ?? []) {
      if (!reached.has(next)) {
        reached.add(next);
        queue.push(next);
      }
    }
  }
  for (const node of nodes) {
    if (node.id !== undefined && !reached.has(node.id)) {
      report("unreachable_node", `graph.nodes[${node.index}]`, `Node "${node.id}" cannot be reached from the TRIGGER; connect it with an edge`, node.id);
    }
  }
}

/** Lazily computed ancestor sets over the well-formed edges. */
export function ancestorIndex(edges: EdgeInfo[]): (nodeId: string) => Set<string> {
  const sourcesOf = new Map<string, string[]>();
  for (const edge of edges) sourcesOf.set(edge.target, [...(sourcesOf.get(edge.target) ?? []), edge.source]);
  const cache = new Map<string, Set<string>>();
  return (nodeId) => {
    let result = cache.get(nodeId);
    if (result) return result;
    result = new Set<string>();
    const stack = [...(sourcesOf.get(nodeId) ?? [])];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (result.has(id)) continue;
      result.add(id);
      stack.push(...(sourcesOf.get(id) ?? []));
    }
    result.delete(nodeId); // on a cycle a node reaches itself; `cycle` reports that
    cache.set(nodeId, result);
    return result;
  };
}
