// Lint configuration: ESLint's recommended rules plus typescript-eslint's
// type-aware recommended set, applied to every TypeScript source.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["out/**", "dist/**", "node_modules/**", "*.vsix"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          // node:test's describe/it return promises the runner itself awaits.
          allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "it", "test"] }],
        },
      ],
      eqeqeq: ["error", "always"],
      curly: "error",
    },
  },
  {
    files: ["**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
