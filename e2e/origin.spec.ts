import { expect, onboard, test } from "./fixtures";
import { uniqueEmail } from "./fixtures";
import { EditorPage } from "./pages/editor-page";

// Point 1 of issue 17: the app opened at 127.0.0.1 (the address many people type) saves like at localhost.
test("the app works at both localhost and 127.0.0.1: sign-up, save and rename succeed at either address", async ({ browser, baseURL }) => {
  test.setTimeout(300_000); // two sign-ups and two saves
  for (const host of ["localhost", "127.0.0.1"]) {
    const base = new URL(baseURL!);
    base.hostname = host;
    const context = await browser.newContext({ baseURL: base.origin });
    const page = await context.newPage();
    await onboard(page, { fullName: "Origin Tester", email: uniqueEmail(`origin-${host.replace(/\./g, "")}`), password: "correct horse battery" });
    const editor = new EditorPage(page);
    await editor.gotoNew();
    await editor.dragFromPalette("TRIGGER", 400, 80);
    await editor.dragFromPalette("OUTPUT", 400, 300);
    await editor.connect("trigger", "output_1");
    await editor.select("output_1");
    await editor.field("output-foreach").fill("{{trigger.body.people}}");
    await editor.field("output-subject").fill("Hello");
    await editor.field("output-body").fill("Hi");
    await editor.setName(`Saved at ${host}`);
    await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
    await editor.save();
    await expect(page.getByTestId("editor-error")).toHaveCount(0);
    expect(new URL(page.url()).hostname).toBe(host);
    await context.close();
  }
});
