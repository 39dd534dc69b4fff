#!/bin/bash
# Stand-in for MindIE PyMotor's deployer probe.sh (startup|readiness|liveness), for the demo and tests only.
# On a real cluster, deploy with --scripts-dir pointing at PyMotor's deployer scripts.
echo "kubectl-mindie example probe.sh: replace it with PyMotor's deployer scripts (--scripts-dir)" >&2
exit 1
