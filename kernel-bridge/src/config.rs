//! How kernels are started: which interpreter, through which enclosure, with which limits.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cc_process::is_executable;
use serde::Deserialize;

use crate::error::KernelError;
use crate::language::Language;

/// Settings shared by every kernel a factory starts.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelConfig {
    /// The Python interpreter; by default the project's (`cc_workspace::python`: an active
    /// or in-project environment, pyright's `venv`, else a `python3` on PATH that is not the
    /// tools' own environment).
    pub python: Option<PathBuf>,
    /// The Node.js binary; by default `node` on PATH.
    pub node: Option<PathBuf>,
    /// A command prefix that runs the interpreter inside an enclosure (a sandbox, a
    /// container): it must pass stdin, stdout and stderr through. Empty: run on the host.
    pub enclosure: Vec<String>,
    /// How long a cell may produce nothing (no output, no display, no bridge call running)
    /// before it is interrupted.
    pub inactivity_budget: Duration,
    /// How long an interrupted cell has to stop before the kernel is killed.
    pub interrupt_grace: Duration,
    /// The output budget of one cell: the most bytes kept of its stdout and stderr together
    /// (each stream keeps its head and tail; a stream that needs less leaves the rest to the
    /// other), and of its echoed value. The rest is counted as cut. Default 16 KiB.
    pub output_cap: usize,
    /// How long a new kernel may take to say it is ready.
    pub startup_timeout: Duration,
    /// Where the host keeps these settings (`[kernel]` of `.cc/tools.toml`): the messages
    /// that say which setting to change name it.
    pub place: cc_workspace::SettingsPlace,
}

impl Default for KernelConfig {
    fn default() -> Self {
        KernelConfig {
            python: None,
            node: None,
            enclosure: Vec::new(),
            inactivity_budget: Duration::from_secs(300),
            interrupt_grace: Duration::from_secs(3),
            output_cap: 16 * 1024,
            startup_timeout: Duration::from_secs(60),
            place: cc_workspace::SettingsPlace::new("kernel"),
        }
    }
}

/// The `[kernel]` section of `.cc/tools.toml`; every key is optional.
///
/// ```toml
/// [kernel]
/// python = ".venv-tools/bin/python"   # relative to the workspace root
/// node = "/usr/local/bin/node"
/// enclosure = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--"]
/// inactivity_budget_secs = 300
/// interrupt_grace_secs = 3
/// output_cap_bytes = 16384
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelOverrides {
    /// See [`KernelConfig::python`].
    pub python: Option<PathBuf>,
    /// See [`KernelConfig::node`].
    pub node: Option<PathBuf>,
    /// See [`KernelConfig::enclosure`].
    pub enclosure: Option<Vec<String>>,
    /// See [`KernelConfig::inactivity_budget`], in seconds.
    pub inactivity_budget_secs: Option<f64>,
    /// See [`KernelConfig::interrupt_grace`], in seconds.
    pub interrupt_grace_secs: Option<f64>,
    /// See [`KernelConfig::output_cap`].
    pub output_cap_bytes: Option<usize>,
}

impl KernelOverrides {
    /// `base` with these overrides applied; relative interpreter paths are taken from `root`.
    pub fn apply(self, base: KernelConfig, root: &Path) -> Result<KernelConfig, String> {
        let seconds = |key: &str, value: f64| -> Result<Duration, String> {
            if value.is_finite() && value > 0.0 && value < 1e9 {
                Ok(Duration::from_secs_f64(value))
            } else {
                Err(format!(
                    "`{key}` must be a positive number of seconds, got {value}"
                ))
            }
        };
        let path = |value: PathBuf| {
            if value.is_relative() && value.components().count() > 1 {
                root.join(value)
            } else {
                value
            }
        };
        let mut config = base;
        if let Some(python) = self.python {
            config.python = Some(path(python));
        }
        if let Some(node) = self.node {
            config.node = Some(path(node));
        }
        if let Some(enclosure) = self.enclosure {
            config.enclosure = enclosure;
        }
        if let Some(value) = self.inactivity_budget_secs {
            config.inactivity_budget = seconds("inactivity_budget_secs", value)?;
        }
        if let Some(value) = self.interrupt_grace_secs {
            config.interrupt_grace = seconds("interrupt_grace_secs", value)?;
        }
        if let Some(cap) = self.output_cap_bytes {
            if cap < 256 {
                return Err(format!(
                    "`output_cap_bytes` must be at least 256, got {cap}"
                ));
            }
            config.output_cap = cap;
        }
        Ok(config)
    }
}

/// The interpreter to run for `language` in a checkout at `workdir`.
///
/// On the host the file must exist; through an enclosure a bare name is passed on for the
/// enclosure to resolve (the checkout's virtualenv is still preferred when it exists, on the
/// assumption that the enclosure mounts the checkout at the same path).
pub(crate) fn interpreter(
    language: Language,
    config: &KernelConfig,
    workdir: &Path,
) -> Result<PathBuf, KernelError> {
    let enclosed = !config.enclosure.is_empty();
    let (configured, setting, fallback) = match language {
        Language::Python => (&config.python, "python", "python3"),
        Language::Javascript => (&config.node, "node", "node"),
    };
    if let Some(path) = configured {
        let bare = path.components().count() == 1;
        if enclosed || (bare && cc_process::find_on_path(&path.to_string_lossy()).is_some()) {
            return Ok(path.clone());
        }
        if is_executable(path) {
            return Ok(path.clone());
        }
        return Err(KernelError::InterpreterNotFound {
            language,
            tried: format!(
                "`{}`, set as `{setting}`{}",
                path.display(),
                config.place.in_the_file()
            ),
            setting,
            section: config.place.shown(),
        });
    }
    let mut tried = Vec::new();
    if language == Language::Python && !enclosed {
        // The project's Python, as the language servers and the debugger choose it (never
        // the tools' own environment), so a cell imports the project's packages.
        let query = cc_workspace::python::PythonQuery::new(workdir, workdir);
        return cc_workspace::python::project_python(&query)
            .map(|choice| choice.path)
            .map_err(|why| KernelError::InterpreterNotFound {
                language,
                tried: why,
                setting,
                section: config.place.shown(),
            });
    }
    if language == Language::Python {
        for venv in [".venv", "venv"] {
            let candidate = workdir.join(venv).join("bin").join("python");
            if is_executable(&candidate) {
                return Ok(candidate);
            }
            tried.push(format!("{venv}/bin/python"));
        }
    }
    if enclosed {
        return Ok(PathBuf::from(fallback));
    }
    if let Some(found) = cc_process::find_on_path(fallback) {
        return Ok(found);
    }
    tried.push(format!("`{fallback}` on PATH"));
    Err(KernelError::InterpreterNotFound {
        language,
        tried: tried.join(", "),
        setting,
        section: config.place.shown(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_apply_and_validate() {
        let root = Path::new("/work/checkout");
        let overrides: KernelOverrides = serde_json::from_value(serde_json::json!({
            "python": "tools/venv/bin/python",
            "inactivity_budget_secs": 2.5,
            "output_cap_bytes": 1024,
            "enclosure": ["env", "--"],
        }))
        .unwrap();
        let config = overrides.apply(KernelConfig::default(), root).unwrap();
        assert_eq!(
            config.python.as_deref(),
            Some(Path::new("/work/checkout/tools/venv/bin/python"))
        );
        assert_eq!(config.inactivity_budget, Duration::from_millis(2500));
        assert_eq!(config.output_cap, 1024);
        assert_eq!(config.enclosure, ["env", "--"]);

        let bad = KernelOverrides {
            inactivity_budget_secs: Some(-1.0),
            ..Default::default()
        };
        let error = bad.apply(KernelConfig::default(), root).unwrap_err();
        assert!(error.contains("inactivity_budget_secs"), "{error}");
        let unknown = serde_json::from_value::<KernelOverrides>(serde_json::json!({"pyhton": "x"}));
        assert!(unknown.unwrap_err().to_string().contains("pyhton"));
    }

    #[test]
    fn prefers_the_checkouts_virtualenv() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("venv").join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let python = bin.join("python");
        std::fs::write(&python, "#!/bin/sh\n").unwrap();
        std::fs::write(dir.path().join("venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::set_permissions(
            &python,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
        )
        .unwrap();
        let found = interpreter(Language::Python, &KernelConfig::default(), dir.path()).unwrap();
        assert_eq!(found, python);

        let missing = KernelConfig {
            node: Some(dir.path().join("no-such-node")),
            ..Default::default()
        };
        let error = interpreter(Language::Javascript, &missing, dir.path()).unwrap_err();
        assert_eq!(error.kind(), "interpreter_not_found");
        assert!(error.to_string().contains("no-such-node"), "{error}");
    }
}
