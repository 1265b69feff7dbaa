/**
 * The RBAC rule both a controller's declaration (`KubeController.Declaration`'s `rbac`) and an operator's extra
 * `rules` hold: declared here, below both, so that `KubeController` need not import `Operator` (which imports it);
 * `Operator` re-exports it as `Operator.PolicyRule`.
 */

/**
 * One RBAC rule (`rbac.authorization.k8s.io/v1` PolicyRule).
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyRule {
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string> | undefined
}
