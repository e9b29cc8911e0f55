//! A shared store as docs/store.md sets one up: a throwaway PostgreSQL
//! with TLS (a CA and a server certificate made here with `openssl`), the
//! three roles made by the very SQL of the guide, and the modes that
//! verify and every role tried through the binary: the writer adds over
//! verify-full, the reader reads and writes the dashboard but cannot add,
//! the writer cannot prune, the owner can; a wrong CA, a wrong host name
//! and a missing CA file are refused by name. (`prefer` and `require`
//! against a server without TLS are tried in tests/store.rs.)

use crate::common::{self, bin};
use scalebench::workloads::pg::cluster::{Bin, Cluster};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A CA (`NAME.pem`, `NAME.key`) in `dir`.
pub(crate) fn make_ca(dir: &Path, name: &str) -> PathBuf {
    let (pem, key) = (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    );
    common::cmd(
        "openssl",
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN=scalebench test {name}"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
            key.to_str().unwrap(),
            "-out",
            pem.to_str().unwrap(),
        ],
    );
    pem
}

/// A server certificate for `san` only (`DNS:localhost`,
/// `IP:198.18.1.1`), signed by the CA `ca`; returns its certificate and
/// key.
pub(crate) fn make_server(dir: &Path, ca: &Path, san: &str) -> (PathBuf, PathBuf) {
    let (pem, key, csr, ext) = (
        dir.join("server.pem"),
        dir.join("server.key"),
        dir.join("server.csr"),
        dir.join("server.ext"),
    );
    let s = |p: &Path| p.to_str().unwrap().to_string();
    common::cmd(
        "openssl",
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            &s(&key),
            "-out",
            &s(&csr),
        ],
    );
    std::fs::write(
        &ext,
        format!("subjectAltName={san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n"),
    )
    .unwrap();
    common::cmd(
        "openssl",
        &[
            "x509",
            "-req",
            "-in",
            &s(&csr),
            "-CA",
            &s(ca),
            "-CAkey",
            &s(&ca.with_extension("key")),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &s(&ext),
            "-out",
            &s(&pem),
        ],
    );
    (pem, key)
}

/// The server's key given to the user PostgreSQL runs as (as root: the
/// `postgres` user, else `nobody`, as the cluster chooses); PostgreSQL
/// reads only a key of its own user's, mode 0600.
pub(crate) fn give_key(key: &Path, dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(key, std::fs::Permissions::from_mode(0o600)).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let given = ["postgres", "nobody"].iter().any(|u| {
            Command::new("chown")
                .arg(u)
                .arg(key)
                .status()
                .is_ok_and(|s| s.success())
        });
        assert!(given, "chown of {} failed", key.display());
    }
}

/// The fenced `sql` block of docs/store.md whose first line is `first`.
pub(crate) fn guide_sql(first: &str) -> String {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/store.md")).unwrap();
    let blocks: Vec<&str> = guide.split("```sql\n").skip(1).collect();
    let block = blocks
        .iter()
        .find(|b| b.starts_with(first))
        .unwrap_or_else(|| panic!("docs/store.md has no sql block starting {first:?}"));
    block.split("```").next().unwrap().to_string()
}

/// Runs `sql` as a script (`psql -f`, as a user runs the guide's) as the
/// superuser of the server at the unix socket in `socket` on `port`, in
/// database `db`.
pub(crate) fn psql(pg: &Bin, socket: &Path, port: u16, db: &str, sql: &str) {
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), sql).unwrap();
    let o = Command::new(pg.tool("psql"))
        .args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-U",
            "scalebench",
            "-d",
            db,
            "-h",
        ])
        .arg(socket)
        .args(["-p", &port.to_string(), "-f"])
        .arg(script.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "psql: {}", common::text(&o.stderr));
}

/// Runs scalebench; returns its exit code and standard error.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let o = bin().args(args).output().unwrap();
    (
        o.status.code(),
        common::text(&o.stdout),
        common::text(&o.stderr),
    )
}

#[test]
fn a_shared_store_over_tls_lets_each_role_do_only_its_part() {
    let t = tempfile::tempdir().unwrap();
    let files = crate::store::make_files(t.path());
    let tls = t.path().join("tls");
    std::fs::create_dir(&tls).unwrap();
    let ca = make_ca(&tls, "ca");
    let other = make_ca(&tls, "other");
    let (cert, key) = make_server(&tls, &ca, "DNS:localhost");
    give_key(&key, &tls);
    let pg = Bin::find().expect("PostgreSQL is installed (scripts/test installs it)");
    let settings = [
        ("ssl", "on".to_string()),
        ("ssl_cert_file", cert.display().to_string()),
        ("ssl_key_file", key.display().to_string()),
        ("log_connections", "on".to_string()),
    ];
    let cluster = Cluster::start(&pg, &t.path().join("pg"), 20, None, &settings, None, None)
        .expect("a throwaway PostgreSQL with TLS starts");
    // The guide's roles, by the guide's SQL.
    let sql = |db: &str, text: &str| psql(&pg, &cluster.socket_dir, cluster.port, db, text);
    sql("postgres", &guide_sql("-- scalebench roles"));
    let url = |role: &str, host: &str, query: &str| {
        format!(
            "postgres://{role}@{host}:{}/scalebench?{query}",
            cluster.port
        )
    };
    let full = format!("sslmode=verify-full&sslrootcert={}", ca.display());
    let owner = url("scalebench_owner", "localhost", &full);
    let writer = url("scalebench_writer", "localhost", &full);
    let reader = url("scalebench_reader", "localhost", &full);

    // Nothing before the owner made the tables: the writer may not.
    let first = files[0].0.to_str().unwrap();
    let (code, _, err) = run(&["results", "add", "--store", &writer, first]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the role `scalebench_writer` may not bring the store's schema to version")
            && err.contains("its owner does, by opening it once"),
        "{err}"
    );
    let (code, _, err) = run(&["results", "list", "--store", &owner]);
    assert_eq!(code, Some(0), "{err}");
    sql("scalebench", &guide_sql("-- scalebench writer"));

    // The writer adds every run over verify-full, and the server says the
    // connection was TLS.
    let mut add = vec!["results", "add", "--store", writer.as_str()];
    let all: Vec<String> = files.iter().map(|(f, _)| f.display().to_string()).collect();
    add.extend(all.iter().map(String::as_str));
    let (code, out, err) = run(&add);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("added")).count(),
        20,
        "{out}"
    );
    let log = std::fs::read_to_string(t.path().join("pg/postgres.log")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("user=scalebench_writer") && l.contains("SSL enabled")),
        "no TLS connection of the writer in the server's log:\n{log}"
    );

    // The reader reads, lists and writes the dashboard; it cannot add.
    let (code, out, err) = run(&["results", "list", "--store", &reader, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 20);
    let site = t.path().join("site");
    let (code, _, err) = run(&[
        "dashboard",
        "--store",
        &reader,
        "-o",
        site.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    for label in ["linux-6.1", "linux-6.18", "freebsd-14"] {
        assert!(index.contains(label), "{label} not on the dashboard");
    }
    let extra = t.path().join("extra.json");
    let mut doc = common::load(&files[0].0);
    doc["label"] = "another".into();
    std::fs::write(&extra, doc.to_string()).unwrap();
    let (code, _, err) = run(&[
        "results",
        "add",
        "--store",
        &reader,
        extra.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the role `scalebench_reader` may not add runs")
            && err.contains("permission denied for table runs")
            && !err.contains("panicked"),
        "{err}"
    );

    // The writer cannot prune; the owner can.
    let prune = |store: &str| run(&["results", "prune", "--store", store, "--keep-last", "2"]);
    let (code, _, err) = prune(&writer);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the role `scalebench_writer` may not remove runs")
            && err.contains("needs the store's owner"),
        "{err}"
    );
    let (code, out, err) = prune(&owner);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("removed")).count(),
        14,
        "{out}"
    );

    // TLS refused by name: a certificate of another CA, a host it was
    // not issued for (verify-ca does not ask), no CA file at all.
    let wrong_ca = format!("sslmode=verify-ca&sslrootcert={}", other.display());
    let (code, _, err) = run(&[
        "results",
        "list",
        "--store",
        &url("scalebench_reader", "localhost", &wrong_ca),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");
    let by_ip = url("scalebench_reader", "127.0.0.1", &full);
    let (code, _, err) = run(&["results", "list", "--store", &by_ip]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not valid for name"), "{err}");
    let ca_only = format!("sslmode=verify-ca&sslrootcert={}", ca.display());
    let (code, _, err) = run(&[
        "results",
        "list",
        "--store",
        &url("scalebench_reader", "127.0.0.1", &ca_only),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let missing = tls.join("nothing.pem");
    let none = format!("sslmode=verify-full&sslrootcert={}", missing.display());
    let (code, _, err) = run(&[
        "results",
        "list",
        "--store",
        &url("scalebench_reader", "localhost", &none),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("{}: ", missing.display())), "{err}");
    let (code, _, err) = run(&[
        "results",
        "list",
        "--store",
        &url("scalebench_reader", "localhost", "sslmode=verify-fully"),
    ]);
    // A malformed store location: a usage error.
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("sslmode=verify-fully: not a mode"), "{err}");
    drop(cluster);
}
