import { expect, test } from "./fixtures";

test("home page renders and leads to sign-up", async ({ page, shot }) => {
  await page.goto("/");
  await expect(page.getByTestId("home-title")).toHaveText("Flowmail");
  await shot("home");
  await page.getByTestId("home-register").click();
  await expect(page.getByTestId("register-form")).toBeVisible();
});

test("signed-in pages send a visitor to the login page", async ({ page, shot }) => {
  await page.goto("/workflows");
  await expect(page).toHaveURL(/\/login\?next=%2Fworkflows/);
  await expect(page.getByTestId("login-form")).toBeVisible();
  await shot("login");
});
