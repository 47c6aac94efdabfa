import { expect, onboard, test, uniqueEmail } from "./fixtures";
import { UploadsPage } from "./pages/uploads-page";

// The server Playwright starts is reached at localhost (its APP_URL) and at 127.0.0.1, the address many people type:
// the session cookie, the same-origin check on cookie mutations and the resumable upload work at either, and a
// mutation from another origin is refused at either.
for (const host of ["localhost", "127.0.0.1"]) {
  test(`at ${host}: signed in, a CSV uploads through the page, and a cross-origin mutation is refused`, async ({ browser, baseURL }) => {
    const base = new URL(baseURL!);
    base.hostname = host;
    const context = await browser.newContext({ baseURL: base.origin });
    const page = await context.newPage();
    await onboard(page, { fullName: "Loopback Tester", email: uniqueEmail(`loop-${host.replace(/\./g, "")}`), password: "correct horse battery" });
    expect(new URL(page.url()).host).toBe(base.host);
    const cookies = await context.cookies(base.origin);
    expect(cookies.length).toBeGreaterThan(0);
    expect(cookies.every((c) => c.domain === host || c.domain === `.${host}`)).toBe(true);

    const uploads = new UploadsPage(page);
    await uploads.goto();
    await uploads.upload("people.csv", "name,email\nAda,ada@example.com\n");
    await expect(uploads.rowCount()).toContainText("1");

    const same = await page.request.post("/api/suppressions", { headers: { origin: base.origin }, data: { emails: ["x@example.com"] } });
    expect(same.status()).toBe(200);
    const cross = await page.request.post("/api/suppressions", { headers: { origin: "http://evil.example" }, data: { emails: ["y@example.com"] } });
    expect(cross.status()).toBe(403);
    expect(cross.headers()["content-type"]).toContain("application/problem+json");
    await context.close();
  });
}
