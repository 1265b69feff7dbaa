// The end-to-end operator benchmark's operator written with controller-runtime v0.24, as its book and builder docs
// show it: a manager (no metrics or health servers, no leader election), a controller built with
// For(WebApp) / Owns(Deployment) / Owns(Service) and MaxConcurrentReconciles, a reconcile that reads the WebApp from
// the manager's cache, server-side applies the Deployment and the Service (client.Apply with apply configurations,
// the WebApp as their controller owner) and merge-patches the status. WebApp is a small typed struct with its
// DeepCopy written by hand (what controller-gen would generate). It does what bench/operator/shared.ts describes.
//
// It speaks the driver's protocol of bench/operator/shared.ts as JSON lines: it writes {"op":"started",...} and
// {"op":"report",...} to stdout and reads {"op":"mark"} and {"op":"report"} from stdin; it exits when stdin closes
// (the driver is gone) or on SIGTERM. CPU seconds and peak RSS come from getrusage(RUSAGE_SELF), as Node's
// process.cpuUsage() and process.resourceUsage().maxRSS do for the TypeScript operators; peak heap is the Go heap's
// live objects (runtime/metrics), sampled every 100 ms.
//
// Flags: --kubeconfig (controller-runtime's flag; default $KUBECONFIG), -workers (8, as CONCURRENCY in shared.ts), -qps and -burst of the
// client (default -1: no client-side rate limit, as our KubeClient without `rateLimit`).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	group        = "bench.reconcile.dev"
	version      = "v1"
	kind         = "WebApp"
	fieldManager = "bench-operator"
)

var groupVersion = schema.GroupVersion{Group: group, Version: version}

// ---------------------------------------------------------------------------------------------------------------
// the WebApp type

type WebAppSpec struct {
	Image    string `json:"image"`
	Replicas int32  `json:"replicas"`
	Port     int32  `json:"port"`
}

type WebAppStatus struct {
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`
	Ready              *bool  `json:"ready,omitempty"`
}

type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WebAppSpec   `json:"spec"`
	Status            WebAppStatus `json:"status,omitempty"`
}

type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}

func (in *WebApp) DeepCopyInto(out *WebApp) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = in.Spec
	if in.Status.ObservedGeneration != nil {
		g := *in.Status.ObservedGeneration
		out.Status.ObservedGeneration = &g
	}
	if in.Status.Ready != nil {
		r := *in.Status.Ready
		out.Status.Ready = &r
	}
}

func (in *WebApp) DeepCopy() *WebApp {
	if in == nil {
		return nil
	}
	out := new(WebApp)
	in.DeepCopyInto(out)
	return out
}

func (in *WebApp) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *WebAppList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(WebAppList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]WebApp, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// ---------------------------------------------------------------------------------------------------------------
// the reconciler

type reconciler struct {
	client client.Client
}

func labelsOf(app *WebApp) map[string]string {
	return map[string]string{"app.kubernetes.io/name": app.Name, "app.kubernetes.io/part-of": "bench"}
}

func ownerOf(app *WebApp) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(groupVersion.String()).
		WithKind(kind).
		WithName(app.Name).
		WithUID(app.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &WebApp{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		// deleted: the garbage collector removes its children
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	labels := labelsOf(app)
	deployment := appsv1ac.Deployment(app.Name, app.Namespace).
		WithLabels(labels).
		WithOwnerReferences(ownerOf(app)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(app.Spec.Replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels).
				WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().
					WithName("app").
					WithImage(app.Spec.Image).
					WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(app.Spec.Port))))))
	if err := r.client.Apply(ctx, deployment, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return ctrl.Result{}, err
	}
	service := corev1ac.Service(app.Name, app.Namespace).
		WithLabels(labels).
		WithOwnerReferences(ownerOf(app)).
		WithSpec(corev1ac.ServiceSpec().
			WithSelector(labels).
			WithPorts(corev1ac.ServicePort().
				WithName("http").
				WithPort(app.Spec.Port).
				WithTargetPort(intstr.FromInt32(app.Spec.Port))))
	if err := r.client.Apply(ctx, service, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return ctrl.Result{}, err
	}
	if app.Status.ObservedGeneration == nil || *app.Status.ObservedGeneration != app.Generation {
		patch := client.MergeFrom(app.DeepCopy())
		generation, ready := app.Generation, true
		app.Status.ObservedGeneration = &generation
		app.Status.Ready = &ready
		if err := r.client.Status().Patch(ctx, app, patch); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// ---------------------------------------------------------------------------------------------------------------
// the driver's protocol (JSON lines)

type usage struct{ cpuSeconds, maxRSSBytes float64 }

func rusage() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	seconds := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return usage{cpuSeconds: seconds(ru.Utime) + seconds(ru.Stime), maxRSSBytes: float64(ru.Maxrss) * 1024}
}

type driver struct {
	mu       sync.Mutex
	out      *json.Encoder
	peakHeap uint64
	mark     usage
	sample   []metrics.Sample
}

func newDriver() *driver {
	d := &driver{
		out:    json.NewEncoder(os.Stdout),
		mark:   rusage(),
		sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}},
	}
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			d.sampleHeap()
		}
	}()
	return d
}

func (d *driver) sampleHeap() {
	d.mu.Lock()
	defer d.mu.Unlock()
	metrics.Read(d.sample)
	if v := d.sample[0].Value; v.Kind() == metrics.KindUint64 && v.Uint64() > d.peakHeap {
		d.peakHeap = v.Uint64()
	}
}

func (d *driver) send(message map[string]any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_ = d.out.Encode(message)
}

// serve answers the driver's messages until stdin closes, then cancels the manager.
func (d *driver) serve(cancel context.CancelFunc) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var message struct {
			Op string `json:"op"`
		}
		if json.Unmarshal(in.Bytes(), &message) != nil {
			continue
		}
		switch message.Op {
		case "mark":
			d.mu.Lock()
			d.mark = rusage()
			d.peakHeap = 0
			d.mu.Unlock()
			d.sampleHeap()
		case "report":
			d.sampleHeap()
			now := rusage()
			d.mu.Lock()
			window, peak := now.cpuSeconds-d.mark.cpuSeconds, d.peakHeap
			d.mu.Unlock()
			d.send(map[string]any{
				"op":              "report",
				"cpuSeconds":      window,
				"cpuSecondsTotal": now.cpuSeconds,
				"peakRssBytes":    now.maxRSSBytes,
				"peakHeapBytes":   peak,
			})
		}
	}
	cancel()
}

// ---------------------------------------------------------------------------------------------------------------

func main() {
	started := time.Now()
	workers := flag.Int("workers", 8, "MaxConcurrentReconciles")
	qps := flag.Float64("qps", -1, "the client's QPS (≤ 0: no client-side rate limit)")
	burst := flag.Int("burst", 0, "the client's burst")
	contentType := flag.String("content-type", "",
		"the REST clients' content type (empty: controller-runtime's default, protobuf for client-go's kinds)")
	verbose := flag.Bool("v", false, "log controller-runtime's info lines too (errors are always logged)")
	flag.Parse()

	verbosity := -1
	if *verbose {
		verbosity = 0
	}
	// funcr prints error lines always, info lines at V ≤ verbosity (none at -1)
	ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) },
		funcr.Options{Verbosity: verbosity}))

	// controller-runtime's own --kubeconfig flag, else $KUBECONFIG (the driver sets it)
	config, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(1)
	}
	config.QPS = float32(*qps)
	config.Burst = *burst
	config.ContentType = *contentType

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	scheme.AddKnownTypes(groupVersion, &WebApp{}, &WebAppList{})
	metav1.AddToGroupVersion(scheme, groupVersion)

	manager, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
	err = ctrl.NewControllerManagedBy(manager).
		Named(fieldManager).
		For(&WebApp{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
		Complete(&reconciler{client: manager.GetClient()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}

	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		cancel()
	}()
	d := newDriver()
	go d.serve(cancel)
	d.send(map[string]any{"op": "started", "startupMillis": float64(time.Since(started).Microseconds()) / 1000})
	if err := manager.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}
