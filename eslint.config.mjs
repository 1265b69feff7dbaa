// Lint and format as the Effect monorepo did with ESLint: the recommended rules of ESLint and
// typescript-eslint, and formatting by dprint through `@effect/eslint-plugin`'s `@effect/dprint` rule
// (dprint's TypeScript plugin from npm, so it works offline). `npm run lint` checks, `npm run lint:fix` rewrites.
import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/",
      "**/dist/",
      "**/.tsbuildinfo/",
      "**/coverage/",
      "bench/.tmp/",
      "tmp/",
      "**/*.md",
      // create-reconcile's templates carry tokens (`__Kind__`), and its tests generate projects into .tmp/
      "packages/create-reconcile/templates/",
      "packages/create-reconcile/.tmp/"
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  {
    files: ["**/*.ts", "**/*.mjs"],
    languageOptions: {
      parser: tseslint.parser,
      ecmaVersion: 2022,
      sourceType: "module"
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // dprint wraps code at 120 columns but leaves long strings and comments alone: those are wrapped by hand
      // Lines stay within 120 columns; exact wire texts (Kubernetes' own messages, strings matched by tests) and
      // Markdown table rows in JSDoc are the exceptions: wrapping them would change them or make them unreadable.
      "max-len": ["error", {
        code: 120,
        tabWidth: 2,
        ignoreUrls: true,
        ignoreStrings: true,
        ignoreTemplateLiterals: true,
        ignorePattern: "^\\s*\\* \\|"
      }],
      "no-fallthrough": "off",
      "no-irregular-whitespace": "off",
      "object-shorthand": "error",
      "prefer-destructuring": "off",
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='push'] > SpreadElement.arguments",
          message: "Do not use spread arguments in Array.push"
        }
      ],
      "no-unused-vars": "off",
      "require-yield": "off",
      "prefer-rest-params": "off",
      "prefer-spread": "off",
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-unsafe-function-type": "off",
      "@typescript-eslint/no-wrapper-object-types": "off",
      "@typescript-eslint/ban-ts-comment": "off",
      "@typescript-eslint/no-array-constructor": "off",
      "@typescript-eslint/no-use-before-define": "off",
      "@typescript-eslint/no-namespace": "off",
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            lineWidth: 120,
            semiColons: "asi",
            quoteStyle: "alwaysDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force"
          }
        }
      ]
    }
  }
)
