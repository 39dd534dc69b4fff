// Command mindie-fake-operator is the test stand-in for MindCluster infer-operator (InferServiceSet →
// InferService → InstanceSet → one StatefulSet or Deployment per instance) and for AIBrix's StormService controller,
// run against a real API server (tests/cluster/cluster.sh).
//
//	mindie-fake-operator --kubeconfig FILE [--max-backoff DURATION] [--run-while NAMESPACE/DEPLOYMENT] [-v N]
//
// It watches all namespaces. Once its caches are synced and its controllers started it prints one line "ready" on
// stdout; it logs to stderr; SIGTERM or SIGINT stop it with status 0. A kubeconfig it cannot load or an API server
// it cannot reach is one line on stderr and status 1. Like the real operator it does not start without Volcano's
// PodGroup CRD (where the infer-operator CRDs are installed): "unable to start manager: ..." on stderr, status 1,
// no "ready". --max-backoff caps the per-item retry backoff of its controllers (default 1000s, controller-runtime's
// default rate limiter as the real operator has it; tests pass a shorter one). --run-while runs infer-operator's
// controllers (not AIBrix's) only while a pod of that Deployment serves, each time from nothing, as the real one runs
// in its Deployment's pod (supervise.go); "ready" then means their first start. No metrics or health-probe listener,
// no leader election.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"kubectl-mindie/tests/cluster/go/testkit/internal/aibrix"
	"kubectl-mindie/tests/cluster/go/testkit/internal/operator"
)

const prog = "mindie-fake-operator"

// fail prints one line and exits 1.
func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, prog+": "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	verbosity := fs.Int("v", 0, "log verbosity (klog)")
	maxBackoff := fs.Duration("max-backoff", operator.DefaultMaxBackoff,
		"longest backoff between retries of a failed reconcile (controller-runtime's default: 1000s)")
	runWhile := fs.String("run-while", "", "NAMESPACE/DEPLOYMENT: run infer-operator's controllers only while a pod "+
		"of that Deployment serves")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	runNs, runDeployment, _ := strings.Cut(*runWhile, "/")
	if *kubeconfig == "" || fs.NArg() > 0 || *maxBackoff <= 0 || (*runWhile != "" && (runNs == "" || runDeployment == "")) {
		fmt.Fprintf(os.Stderr, "usage: %s --kubeconfig FILE [--max-backoff DURATION] [--run-while NAMESPACE/DEPLOYMENT] "+
			"[-v N]\n", prog)
		os.Exit(2)
	}
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("v", fmt.Sprint(*verbosity))
	// controller-runtime's own progress lines (starting sources, workers) only with -v=1; errors always.
	ctrl.SetLogger(klog.NewKlogr().V(1))

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail("cannot load kubeconfig %s: %v", *kubeconfig, err)
	}
	cfg.UserAgent = prog
	// Many objects at once (a deploy, a GC cascade): the client-side limiter must not be what tests wait for.
	cfg.QPS, cfg.Burst = 200, 400
	cfg.WarningHandler = rest.NoWarnings{}

	ctx := ctrl.SetupSignalHandler()
	if err := reachable(cfg); err != nil {
		fail("cannot reach the API server at %s: %v", cfg.Host, err)
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail("%v", err)
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fail("%v", err)
	}
	features, storm, err := detect(ctx, direct)
	if err != nil {
		fail("cannot read the cluster's CRDs: %v", err)
	}
	if features.HPA, err = hpaServed(cfg); err != nil {
		fail("cannot read the cluster's APIs: %v", err)
	}
	if err := operator.StartupError(features); err != nil {
		fail("%v", err)
	}
	ready := sync.OnceFunc(func() {
		fmt.Println("ready")
		_ = os.Stdout.Sync()
	})
	if *runWhile == "" {
		err = run(ctx, cfg, scheme, features, storm, *maxBackoff, ready)
	} else {
		err = supervise(ctx, cfg, runNs, runDeployment, func(ctx context.Context) error {
			return run(ctx, cfg, scheme, features, false, *maxBackoff, ready)
		})
	}
	if err != nil {
		fail("%v", err)
	}
	klog.Flush()
}

// detect reads which CRDs are established, within 30 s.
func detect(ctx context.Context, c client.Reader) (operator.Features, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	features, err := operator.Detect(ctx, c)
	if err != nil {
		return features, false, err
	}
	storm, err := operator.CRDEstablished(ctx, c, aibrix.CRDName)
	return features, storm, err
}

// hpaServed asks discovery whether autoscaling/v2 HorizontalPodAutoscalers are served, within 15 s.
func hpaServed(cfg *rest.Config) (bool, error) {
	c := rest.CopyConfig(cfg)
	c.Timeout = 15 * time.Second
	d, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return false, err
	}
	return operator.HPAServed(d)
}

// reachable asks the API server for its version, within 15 s.
func reachable(cfg *rest.Config) error {
	c := rest.CopyConfig(cfg)
	c.Timeout = 15 * time.Second
	d, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return err
	}
	_, err = d.ServerVersion()
	return err
}

// run starts the manager, calls ready once its caches are synced and its controllers started, and returns when
// it stops: nil after a signal (or its context's end).
func run(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, f operator.Features, storm bool,
	maxBackoff time.Duration, ready func()) error {
	klog.Infof("infer-operator: %v (PodGroup CRD: %v, autoscaling/v2: %v); AIBrix StormService: %v; max backoff %s",
		f.MindCluster, f.PodGroup, f.HPA, storm, maxBackoff)

	byObject := map[client.Object]cache.ByObject{}
	maps.Copy(byObject, operator.CacheByObject(f))
	if storm {
		maps.Copy(byObject, aibrix.CacheByObject())
	}
	shutdown := 5 * time.Second
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          false,
		GracefulShutdownTimeout: &shutdown,
		// --run-while starts the same controllers again in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:      cache.Options{ByObject: byObject},
		// The CRD kinds are unstructured: read them from the cache too, not from the API server each time.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		return fmt.Errorf("cannot create the controller manager: %w", err)
	}

	// core/v1 Events, folded by the event correlator (count), as the real operator's recorder writes them, from the
	// InstanceSet controller (its only events).
	cs, err := typedcorev1.NewForConfig(cfg)
	if err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme, corev1.EventSource{Component: operator.InstanceSetControllerName})

	if err := operator.Setup(ctx, mgr, f, recorder, maxBackoff); err != nil {
		return fmt.Errorf("cannot set up the infer-operator controllers: %w", err)
	}
	watched := operator.Watched(f)
	if storm {
		if err := aibrix.Setup(mgr, maxBackoff); err != nil {
			return fmt.Errorf("cannot set up the StormService controller: %w", err)
		}
		watched = append(watched, aibrix.Watched()...)
	}
	// Every informer the controllers use exists before the manager starts, so the manager's cache sync covers them
	// all and "ready" means that every watch has its initial list.
	for _, obj := range watched {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("cannot watch %T: %w", obj, err)
		}
	}

	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case err := <-done:
		return stopped(err)
	case <-mgr.Elected():
	}
	if mgr.GetCache().WaitForCacheSync(ctx) {
		ready()
	}
	return stopped(<-done)
}

// stopped: the manager's end after a signal is no error.
func stopped(err error) error {
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
