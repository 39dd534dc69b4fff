package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// The real infer-operator is a process in the pod of its Deployment (Ascend/mind-cluster component/infer-operator
// build/infer-operator.yaml: Deployment infer-operator-manager in namespace mindx-dl). Everything it holds in memory
// (its caches, the rescheduler's fault records: pkg/controller/rescheduling/rescheduling.go) lives as long as that
// process; the kubelet stops it (SIGTERM) when its pod starts terminating, and a new pod starts it from nothing.
// --run-while NAMESPACE/DEPLOYMENT models that: the controllers run only while a pod of that Deployment serves.

// serving: a pod that runs the operator's process: Ready and not terminating (its deletion sends SIGTERM at once).
func serving(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// supervise calls start(ctx) whenever a pod of Deployment ns/name serves and none did, and cancels that context
// (waiting for start to return) when none serves any more; each start begins from nothing. It returns when ctx ends,
// or with start's error when the controllers stop by themselves.
func supervise(ctx context.Context, cfg *rest.Config, ns, name string, start func(context.Context) error) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dep, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the operator's deployment: %w", err)
	}
	selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return fmt.Errorf("the selector of deployment %s/%s: %w", ns, name, err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector.String() }))
	pods := factory.Core().V1().Pods()
	changed := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := pods.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: notify, UpdateFunc: func(_, o any) { notify(o) }, DeleteFunc: notify}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx.Done())
	return loop(ctx, changed, func() bool {
		list, _ := pods.Lister().List(labels.Everything())
		return serving(list)
	}, start)
}

// loop starts and stops the controllers as `alive` says after each change.
func loop(ctx context.Context, changed <-chan struct{}, alive func() bool, start func(context.Context) error) error {
	var cancel context.CancelFunc
	var done chan error
	stop := func() error {
		cancel()
		err := <-done
		cancel, done = nil, nil
		return err
	}
	for {
		switch up := alive(); {
		case up && cancel == nil:
			klog.Infof("supervisor: a pod of the operator's deployment serves: starting the controllers")
			runCtx, c := context.WithCancel(ctx)
			cancel = c
			done = make(chan error, 1)
			go func() { done <- start(runCtx) }()
		case !up && cancel != nil:
			klog.Infof("supervisor: no pod of the operator's deployment serves: stopping the controllers")
			if err := stop(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			if cancel != nil {
				return stop()
			}
			return nil
		case <-changed:
		case err := <-done:
			if ctx.Err() != nil { // a signal raced the select: the controllers stopped for it
				return nil
			}
			cancel()
			return fmt.Errorf("the controllers stopped: %v", err)
		}
	}
}
