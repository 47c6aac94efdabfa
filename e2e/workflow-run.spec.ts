import { expect, test } from "./fixtures";

const people = (tag: string) => [
  ["name", "email", "rating"],
  ["Ada", `ada-${tag}@example.com`, "5"],
  ["Grace", `grace-${tag}@example.com`, "4"],
  ["Alan", `alan-${tag}@example.com`, "2"],
];

test("build TRIGGER → DATA_SOURCE → FILTER → OUTPUT by hand, run it, every node turns green and the emails arrive", async ({ page, signedIn, uploads, editor, mailbox, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const csv = people(tag).map((r) => r.join(",")).join("\n") + "\n";

  await uploads.goto();
  await uploads.upload("people.csv", csv);
  await expect(uploads.rowCount()).toHaveText("3 rows");
  await expect(uploads.columns()).toHaveText(["name", "email", "rating"]);
  await shot("uploads");

  await editor.gotoNew();
  await expect(page.getByTestId("canvas-empty")).toBeVisible();
  await editor.dragFromPalette("TRIGGER", 450, 70);
  await editor.dragFromPalette("DATA_SOURCE", 450, 250);
  await editor.dragFromPalette("FILTER", 450, 430);
  await editor.dragFromPalette("OUTPUT", 450, 610);
  await expect(editor.node("trigger")).toBeVisible();
  await expect(editor.node("output_1")).toBeVisible();

  await editor.connect("trigger", "source_1");
  await editor.connect("source_1", "filter_1");
  await editor.connect("filter_1", "output_1");

  await editor.select("source_1");
  await editor.field("upload-select").selectOption({ label: "people.csv (3 rows)" });

  await editor.select("filter_1");
  await editor.field("filter-source").fill("{{source_1.rows}}");
  await editor.field("filter-expr").fill("rating >= 4");

  await editor.select("output_1");
  await editor.field("output-foreach").fill("{{filter_1.items}}");
  await editor.field("output-to").fill("{{item.email}}");
  // The subject is typed so the template autocomplete offers the upload's columns.
  await editor.field("output-subject").fill("");
  await editor.field("output-subject").pressSequentially("Hello {{item.na");
  await expect(page.getByTestId("template-suggestions")).toContainText("item.name");
  await page.keyboard.press("Enter");
  await expect(editor.field("output-subject")).toHaveValue("Hello {{item.name}}");
  await editor.field("output-body").fill("Thanks for rating us {{item.rating}}.");

  await editor.setName(`Thank happy people ${tag}`);
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
  await editor.save();
  await shot("editor");

  await editor.run();
  for (const id of ["trigger", "source_1", "filter_1", "output_1"]) {
    await expect(editor.status(id)).toHaveAttribute("data-status", "SUCCESS", { timeout: 60_000 });
  }
  await expect(page.getByTestId("summary-emails-sent")).toHaveText("2");
  await expect(page.getByTestId("summary-filtered-out")).toHaveText("1");
  await expect(page.getByTestId("summary-total-rows")).toHaveText("3");
  await expect(page.getByTestId("edge-count-filter_1->output_1")).toHaveText("2 items");
  await shot("editor-run");

  await editor.select("filter_1");
  await expect(page.getByTestId("node-output-items")).toContainText(`grace-${tag}@example.com`);
  await shot("editor-output");

  for (const kept of ["ada", "grace"]) {
    await mailbox.goto(`${kept}-${tag}@example.com`);
    await expect(mailbox.items(`${kept}-${tag}@example.com`)).toHaveCount(1);
  }
  await expect(page.getByTestId("mailbox-subject")).toHaveText("Hello Grace");
  await expect(page.getByTestId("mailbox-text")).toContainText("Thanks for rating us 4.");
  await mailbox.goto(`alan-${tag}@example.com`);
  await expect(page.getByTestId("mailbox-empty")).toBeVisible();
  await shot("mailbox");
});
