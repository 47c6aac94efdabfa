import { expect, test } from "./fixtures";

// Settings → API keys: create a key with picked scopes, copy it once, use it from outside the browser session, see
// its last use, revoke it — and the very next request with it is refused.
test("create an API key, copy it, use it, revoke it", async ({ page, signedIn, context, request, baseURL }) => {
  expect(signedIn.email).toBeTruthy();
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseURL });
  await page.goto("/settings");
  const section = page.getByTestId("api-keys-section");
  await expect(section).toBeVisible();
  await expect(section).toContainText("No API keys yet.");

  await page.getByTestId("api-key-name").fill("CI deploy");
  // Defaults: workflows:read, runs:read, runs:write. Add uploads:write, drop runs:read.
  await page.getByTestId("api-key-scope-uploads:write").check();
  await page.getByTestId("api-key-scope-runs:read").uncheck();
  await page.getByTestId("api-key-expiry").selectOption("30");
  await page.getByTestId("api-key-create").click();

  const secret = page.getByTestId("api-key-secret");
  await expect(secret).toHaveText(/^fmk_[0-9A-Za-z]{43}$/);
  const key = (await secret.textContent())!;
  await page.getByTestId("api-key-copy").click();
  await expect(page.getByTestId("api-key-copy")).toHaveText("Copied");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);

  const row = page.getByTestId("api-key-row");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("CI deploy");
  await expect(row).toContainText(key.slice(0, 12));
  await expect(row).toContainText("uploads:write");
  await expect(row).not.toContainText("runs:read");
  await expect(page.getByTestId("api-key-last-used")).toHaveText("never used");

  // The key from outside the browser (no session cookie): what its scopes allow, and nothing more.
  const headers = { authorization: `Bearer ${key}` };
  const listed = await request.get("/api/workflows", { headers });
  expect(listed.status()).toBe(200);
  expect(await listed.json()).toEqual({ items: [], nextCursor: null });
  const forbidden = await request.get("/api/uploads", { headers });
  expect(forbidden.status()).toBe(403);
  expect(forbidden.headers()["www-authenticate"]).toBe('Bearer error="insufficient_scope", scope="uploads:read"');
  expect((await request.get("/api/account", { headers })).status()).toBe(403);

  // Close the one-time display: the key is not shown again; the list shows its use.
  await page.getByTestId("api-key-done").click();
  await expect(secret).toHaveCount(0);
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId("api-key-last-used")).toHaveText(/last used/, { timeout: 2_000 });
  }).toPass();
  await expect(page.getByTestId("api-keys-section")).not.toContainText(key);

  await page.getByTestId("api-key-revoke").click();
  await expect(page.getByTestId("api-key-row")).toHaveCount(0);
  const refused = await request.get("/api/workflows", { headers });
  expect(refused.status()).toBe(401);
  expect((await refused.json()).code).toBe("invalid_token");
});
