import { expect, test } from "./fixtures";

test("register, read the code in the mailbox, verify, sign out and sign in again", async ({ page, registerPage, verifyPage, mailbox, loginPage, newAccount, shot }) => {
  await registerPage.goto();
  await shot("register");
  await registerPage.register(newAccount);
  await expect(page.getByTestId("resend-otp")).toBeDisabled();
  await expect(page.getByTestId("resend-otp")).toContainText(/Resend code in \d+s/);
  await shot("verify");

  const code = await mailbox.readOtp(newAccount.email);
  await shot("mailbox-otp");

  await verifyPage.goto(newAccount.email);
  await verifyPage.typeCode(code);
  await expect(page).toHaveURL(/\/workflows$/);
  await expect(page.getByTestId("current-user")).toHaveText(newAccount.fullName);
  await expect(page.getByTestId("workflows-empty")).toBeVisible();
  await shot("workflows-empty");

  await page.getByTestId("logout").click();
  await expect(page).toHaveURL(/\/login/);
  await loginPage.login(newAccount.email, "wrong password!");
  await expect(page.getByTestId("login-error")).toBeVisible();
  await loginPage.login(newAccount.email, newAccount.password);
  await expect(page).toHaveURL(/\/workflows$/);
});

test("a wrong code is explained in words and the boxes clear", async ({ page, registerPage, verifyPage, newAccount }) => {
  await registerPage.goto();
  await registerPage.register(newAccount);
  await verifyPage.pasteCode("000000");
  await expect(page.getByTestId("verify-error")).toBeVisible();
  await expect(page.getByTestId("otp-digit-0")).toHaveValue("");
});

test("registration errors appear next to the fields", async ({ page, registerPage }) => {
  await registerPage.goto();
  await page.getByTestId("register-name").fill("Ada");
  await page.getByTestId("register-email").fill("not-an-email");
  await page.getByTestId("register-password").fill("short");
  await page.getByTestId("register-submit").click();
  await expect(page.getByTestId("register-password-error")).toBeVisible();
  await expect(page.getByTestId("register-email-error")).toBeVisible();
});
