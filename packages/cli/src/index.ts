/**
 * @since 0.1.0
 */
export * as Main from "./Main.js"
