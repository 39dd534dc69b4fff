#!/bin/bash
# Stand-in for MindIE PyMotor's deployer kv_conductor.sh, for the demo and tests only: no container runs there.
# On a real cluster, deploy with --scripts-dir pointing at PyMotor's deployer folder (examples/deployer).
echo "kubectl-mindie example kv_conductor.sh: replace it with PyMotor's deployer scripts (--scripts-dir)" >&2
exit 1
