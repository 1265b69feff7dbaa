#!/usr/bin/env node
/**
 * `npm create reconcile@latest my-operator` (stub: the scaffold helper writes it).
 *
 * @since 0.1.0
 */
export {}
