/** Reading the selected interpreter from fake Python-extension APIs, new and old. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PythonExtensionApi } from "../src/pythonApi";
import { interpreterFromPythonApi } from "../src/pythonApi";

function environmentsApi(executable: string | undefined, active = true): PythonExtensionApi {
  return {
    environments: {
      getActiveEnvironmentPath: () => (active ? { path: "/envs/mlir" } : undefined),
      resolveEnvironment: (environment) => {
        assert.deepEqual(environment, { path: "/envs/mlir" });
        return Promise.resolve({ executable: { uri: executable !== undefined ? { fsPath: executable } : undefined } });
      },
    },
  };
}

describe("interpreterFromPythonApi", () => {
  it("uses the environments API when it reports an executable", async () => {
    assert.deepEqual(await interpreterFromPythonApi(environmentsApi("/envs/mlir/bin/python")), {
      command: "/envs/mlir/bin/python",
      args: [],
    });
  });

  it("falls back to the execution details of the older API, keeping prefix arguments", async () => {
    const api: PythonExtensionApi = {
      ...environmentsApi(undefined),
      settings: { getExecutionDetails: () => ({ execCommand: ["conda", "run", "-n", "mlir", "python"] }) },
    };
    assert.deepEqual(await interpreterFromPythonApi(api), { command: "conda", args: ["run", "-n", "mlir", "python"] });
  });

  it("returns undefined without an API or an interpreter", async () => {
    assert.equal(await interpreterFromPythonApi(undefined), undefined);
    assert.equal(await interpreterFromPythonApi(environmentsApi(undefined, false)), undefined);
    assert.equal(await interpreterFromPythonApi({ settings: { getExecutionDetails: () => ({ execCommand: undefined }) } }), undefined);
  });
});
