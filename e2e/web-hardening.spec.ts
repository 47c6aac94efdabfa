import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, onboard, test, uniqueEmail } from "./fixtures";
import { LoginPage } from "./pages/auth-pages";
import { MailboxPage } from "./pages/mailbox-page";
import { apiPost, people, thanksGraph, uploadCsv } from "./support/api";

// The web-facing hardening: forgot/reset password, the sign-in redirect, the row menu of the last workflow, the editor
// on a phone, the security headers, malformed paths, and `next dev` opened at http://127.0.0.1.

test("forgot password: the sign-in link, a reset code from the mailbox, a new password that signs in", async ({ page, newAccount, shot }) => {
  await onboard(page, newAccount);
  await page.context().clearCookies();
  const login = new LoginPage(page);
  await login.goto();
  await page.getByTestId("login-email").fill(newAccount.email);
  await page.getByTestId("login-forgot").click();
  await expect(page).toHaveURL(/\/forgot-password/);
  await expect(page.getByTestId("forgot-form")).toHaveAttribute("data-ready", "true");
  await expect(page.getByTestId("forgot-email")).toHaveValue(newAccount.email);
  // The sign-up code went out a moment ago: the minute between code emails may still run.
  await expect(async () => {
    await page.getByTestId("forgot-submit").click();
    await expect(page.getByTestId("reset-form")).toBeVisible({ timeout: 2000 });
  }).toPass({ timeout: 90_000, intervals: [5000] });
  await shot("forgot-password-code");
  // The mailbox in a second tab, as a person would do it; the reset form stays open in the first.
  const mailTab = await page.context().newPage();
  const mailbox = new MailboxPage(mailTab);
  const code = await mailbox.readOtp(newAccount.email);
  await expect(mailTab.getByTestId("mailbox-message")).toContainText("password reset code");
  await mailTab.close();
  await page.locator("input[autocomplete='one-time-code']").click();
  await page.keyboard.type(code);
  await page.getByTestId("reset-password").fill("quiet harbour lantern nine");
  await page.getByTestId("reset-submit").click();
  await expect(page).toHaveURL(/\/workflows$/);
  await page.context().clearCookies();
  await login.goto();
  await login.login(newAccount.email, "quiet harbour lantern nine");
  await expect(page).toHaveURL(/\/workflows$/);
});

test("sign-in never follows ?next= to another origin", async ({ page, newAccount }) => {
  await onboard(page, newAccount);
  await page.context().clearCookies();
  await page.goto("/login?next=/%5Cevil.example");
  await expect(page.getByTestId("login-form")).toHaveAttribute("data-ready", "true");
  await page.getByTestId("login-email").fill(newAccount.email);
  await page.getByTestId("login-password").fill(newAccount.password);
  await page.getByTestId("login-submit").click();
  await expect(page).toHaveURL(/\/workflows$/);
  expect(new URL(page.url()).host).not.toContain("evil");
});

test("the row menu of the last workflow opens whole and its items work", async ({ page, signedIn, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  for (let i = 0; i < 4; i++) await apiPost(page, "/api/workflows", { name: `Row ${i} ${tag}`, graph: thanksGraph(uploadId) });
  await page.goto("/workflows");
  const buttons = page.getByTestId("workflow-actions");
  await expect(buttons).toHaveCount(4);
  await buttons.last().click();
  const menu = page.getByTestId("workflow-menu");
  await expect(menu).toBeVisible();
  await shot("workflows-last-row-menu");
  // Every item is the topmost element at its centre: nothing clips or covers it.
  for (const id of ["action-rename", "action-duplicate", "action-export", "action-delete"]) {
    const box = (await page.getByTestId(id).boundingBox())!;
    const hit = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest("[data-testid]")?.getAttribute("data-testid"), [box.x + box.width / 2, box.y + box.height / 2]);
    expect(hit, id).toBe(id);
  }
  await page.getByTestId("action-delete").click();
  await expect(page.getByTestId("delete-dialog")).toBeVisible();
});

test("the editor at 390 px: Run on screen, no sideways scroll, a tapped node shows its details", async ({ page, signedIn, shot }) => {
  const tag = signedIn.email.split("@")[0];
  const { uploadId } = await uploadCsv(page, "people.csv", people(tag));
  const workflow = await apiPost<{ id: string }>(page, "/api/workflows", { name: `Phone ${tag}`, graph: thanksGraph(uploadId) });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/workflows/${workflow.id}`);
  const run = page.getByTestId("run");
  await expect(run).toBeVisible();
  const box = (await run.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.locator("[data-node-type]").first().click();
  await expect(page.getByTestId("node-sheet")).toBeVisible();
  await shot("editor-phone-node-sheet");
  await page.getByTestId("node-sheet-close").click();
  await expect(page.getByTestId("node-sheet")).toBeHidden();
});

test("every answer carries the security headers; a malformed % in an API path is a problem+json 400", async ({ request }) => {
  const res = await request.get("/login");
  const csp = res.headers()["content-security-policy"];
  expect(csp).toContain("frame-ancestors 'none'");
  expect(res.headers()["x-content-type-options"]).toBe("nosniff");
  expect(res.headers()["referrer-policy"]).toBe("strict-origin-when-cross-origin");
  expect(res.headers()["strict-transport-security"]).toContain("max-age=");
  const bad = await request.get("/api/workflows/%E0%A4%A");
  expect(bad.status()).toBe(400);
  expect(bad.headers()["content-type"]).toContain("application/problem+json");
  expect((await bad.json()).code).toBe("bad_request");
});

test.describe("next dev at http://127.0.0.1", () => {
  test.skip(!!process.env.PW_BASE_URL, "starts its own dev server");
  let server: ChildProcess | undefined;
  test.afterAll(() => {
    if (server?.pid) process.kill(-server.pid, "SIGTERM");
  });

  test("the sign-in page becomes interactive", async ({ page }) => {
    test.setTimeout(300_000);
    const port = Number(process.env.PW_DEV_PORT ?? (Number(process.env.PW_PORT ?? 3300) + 1));
    server = spawn("npx", ["next", "dev", "-p", String(port), "-H", "127.0.0.1"], {
      detached: true,
      stdio: "ignore",
      env: {
        ...process.env, NODE_ENV: "development", NEXT_DIST_DIR: ".next-e2e-dev",
        DATA_DIR: mkdtempSync(join(tmpdir(), "flowmail-e2e-dev-")), AUTH_SECRET: "e2e-dev-secret-0123456789abcdef0123456789",
      },
    });
    const base = `http://127.0.0.1:${port}`;
    await expect(async () => {
      const res = await page.request.get(`${base}/api/health`, { timeout: 60_000 });
      expect(res.ok()).toBe(true);
    }).toPass({ timeout: 240_000, intervals: [2000] });
    await page.goto(`${base}/login`, { timeout: 120_000 });
    await expect(page.getByTestId("login-form")).toHaveAttribute("data-ready", "true", { timeout: 120_000 });
    await page.getByTestId("login-email").fill(uniqueEmail("dev"));
    await page.getByTestId("login-password").fill("anything at all");
    await expect(page.getByTestId("login-submit")).toBeEnabled();
  });
});
