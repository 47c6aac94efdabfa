// OUTPUT's rendering of 40,000 emails (three templates each) in this process, eight times: the CPU that runs on the
// main thread between a node's start and its first ledger row. Usage: npx tsx --conditions=react-server bench/render-emails.ts
import { fakeRuntime } from "@/lib/nodes/__tests__/fake-runtime";
import { renderAllEmails } from "@/lib/nodes/output/render-emails";
import type { NodeOf } from "@/lib/nodes/types";

const items = Array.from({ length: 40000 }, (_, i) => ({ name: `Person ${i}`, email: `person${i}@example.com`, rating: String((i % 5) + 1), comment: "Lorem ipsum dolor sit amet" }));
const node = { id: "out", type: "OUTPUT", data: { forEach: "{{f.items}}", to: "{{item.email}}", subject: "Thanks {{item.name}}", body: "You rated us {{item.rating}}." } } as NodeOf<"OUTPUT">;
const rt = fakeRuntime({ f: { items } });
(async () => {
  for (let r = 0; r < 8; r++) {
    const t0 = performance.now();
    const emails = await renderAllEmails(node, rt, items, { headerUrl: false });
    console.log(`render ${emails.length}: ${(performance.now() - t0).toFixed(1)} ms`);
  }
})();
