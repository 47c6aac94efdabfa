// OUTPUT's rendering of 40,000 HTML emails whose values land between tags, in a quoted attribute, an unquoted one and
// a URL attribute (each checked), beside the same body as plain text: what placing values by their HTML context costs.
// Usage: npx tsx --conditions=react-server bench/render-html-emails.ts
import { fakeRuntime } from "@/lib/nodes/__tests__/fake-runtime";
import { renderAllEmails } from "@/lib/nodes/output/render-emails";
import type { NodeOf } from "@/lib/nodes/types";

const items = Array.from({ length: 40000 }, (_, i) => ({ name: `Person ${i}`, email: `person${i}@example.com`, url: i % 7 ? `https://example.com/p/${i}` : "javascript:alert(1)", rating: String((i % 5) + 1) }));
const body =
  '<p>Hi {{item.name}},</p><p title="{{item.name}}">You rated us <b>{{item.rating}}</b>.</p><a href="{{item.url}}">Your page</a> <td width={{item.rating}}>x</td>';
const node = (format: "html" | "text") =>
  ({ id: "out", type: "OUTPUT", data: { forEach: "{{f.items}}", to: "{{item.email}}", subject: "Thanks {{item.name}}", body, format, unsubscribe: false } }) as NodeOf<"OUTPUT">;
const rt = fakeRuntime({ f: { items } });
(async () => {
  for (const format of ["text", "html"] as const) {
    const times: number[] = [];
    for (let r = 0; r < 6; r++) {
      const t0 = performance.now();
      await renderAllEmails(node(format), rt, items, { headerUrl: false });
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(`${format}: 40,000 emails, median ${times[3].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[5].toFixed(1)})`);
  }
})();
