//! TLS to a PostgreSQL store as libpq asks for it: `sslmode` (`disable`,
//! `prefer`, `require`, `verify-ca`, `verify-full`) and `sslrootcert`
//! (the file of the certificate authority) in the URL's query.
//!
//! The `postgres` crate reads only the first three modes and no CA file,
//! so both parameters are taken out of the URL here ([`split`]) and the
//! connection's TLS is made with rustls ([`connector`]):
//!
//! - `disable`: never encrypted;
//! - `prefer` (libpq's default, and so ours): encrypted when the server
//!   offers TLS, plain otherwise; the certificate is checked against the
//!   CA file when one is given, else not;
//! - `require`: encrypted or refused; the certificate is checked against
//!   the CA file when one is given (as libpq does), else not;
//! - `verify-ca`: encrypted, the server's certificate signed by the CA;
//! - `verify-full`: that, and issued for the host of the URL.
//!
//! A mode that verifies without `sslrootcert` takes libpq's default file,
//! `~/.postgresql/root.crt`.

use crate::error::DbError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// How much TLS a connection asks for (libpq's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Never encrypted.
    Disable,
    /// Encrypted when the server offers it.
    Prefer,
    /// Encrypted or refused.
    Require,
    /// Encrypted, the certificate signed by the CA.
    VerifyCa,
    /// Encrypted, the certificate signed by the CA and issued for the host.
    VerifyFull,
}

impl Mode {
    /// Every mode, as the URL spells it.
    pub const ALL: [(&'static str, Mode); 5] = [
        ("disable", Mode::Disable),
        ("prefer", Mode::Prefer),
        ("require", Mode::Require),
        ("verify-ca", Mode::VerifyCa),
        ("verify-full", Mode::VerifyFull),
    ];

    /// The mode as the URL spells it.
    pub fn name(self) -> &'static str {
        Mode::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("prefer", |(n, _)| n)
    }

    /// Whether a plain connection is refused.
    pub fn required(self) -> bool {
        !matches!(self, Mode::Disable | Mode::Prefer)
    }

    /// The `postgres` crate's mode for it.
    fn crate_mode(self) -> postgres::config::SslMode {
        use postgres::config::SslMode;
        match self {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            _ => SslMode::Require,
        }
    }
}

/// What a URL asks of TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// `sslmode`, `prefer` when not given.
    pub mode: Mode,
    /// `sslrootcert`, when given.
    pub root: Option<PathBuf>,
}

/// `url` without its `sslmode` and `sslrootcert` parameters (what the
/// `postgres` crate is given), and what they asked. A mode not known,
/// an empty CA file name, or either given twice is refused by name.
pub fn split(url: &str) -> Result<(String, Ask), String> {
    let mut ask = Ask {
        mode: Mode::Prefer,
        root: None,
    };
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), ask));
    };
    let (mut mode, mut kept) = (None, Vec::new());
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| format!("{key}: not UTF-8 once decoded"))?;
        match key {
            "sslmode" => {
                let m = Mode::ALL
                    .iter()
                    .find(|(n, _)| *n == value)
                    .map(|(_, m)| *m)
                    .ok_or_else(|| {
                        let names: Vec<&str> = Mode::ALL.iter().map(|(n, _)| *n).collect();
                        format!("sslmode={value}: not a mode (one of {})", names.join(", "))
                    })?;
                if mode.replace(m).is_some() {
                    return Err("sslmode is given twice".into());
                }
            }
            "sslrootcert" => {
                if value.is_empty() {
                    return Err("sslrootcert is empty: give the CA's certificate file".into());
                }
                if value == "system" {
                    return Err(
                        "sslrootcert=system: not supported; give the CA's certificate file (PEM)"
                            .into(),
                    );
                }
                if ask.root.replace(PathBuf::from(&*value)).is_some() {
                    return Err("sslrootcert is given twice".into());
                }
            }
            _ => kept.push(pair),
        }
    }
    ask.mode = mode.unwrap_or(Mode::Prefer);
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, ask))
}

/// The `postgres` crate's configuration of a URL: parsed without its TLS
/// parameters, their mode set.
pub fn config(url: &str) -> Result<(postgres::Config, Ask), DbError> {
    let (rest, ask) = split(url).map_err(DbError::TlsAsk)?;
    let mut config: postgres::Config = rest.parse()?;
    config.ssl_mode(ask.mode.crate_mode());
    Ok((config, ask))
}

/// The CA file a mode checks against: the one given, else libpq's
/// default when the mode verifies (an error naming both when neither is
/// there); `None` for a mode that checks nothing.
fn ca_file(ask: &Ask) -> Result<Option<PathBuf>, DbError> {
    if let Some(r) = &ask.root {
        return Ok(Some(r.clone()));
    }
    if !matches!(ask.mode, Mode::VerifyCa | Mode::VerifyFull) {
        return Ok(None);
    }
    let default = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".postgresql/root.crt"));
    match default {
        Some(d) if d.exists() => Ok(Some(d)),
        _ => Err(DbError::TlsAsk(format!(
            "sslmode={} checks the server's certificate against a CA: give sslrootcert=FILE in the URL (libpq's default, ~/.postgresql/root.crt, is not there)",
            ask.mode.name()
        ))),
    }
}

/// The certificates of a PEM file, none of them refused.
fn roots(file: &std::path::Path) -> Result<rustls::RootCertStore, DbError> {
    let bad = |why: String| DbError::CaFile {
        file: file.to_path_buf(),
        why,
    };
    let bytes = std::fs::read(file).map_err(|e| bad(e.to_string()))?;
    let mut store = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&bytes) {
        let cert = cert.map_err(|e| bad(format!("not a PEM certificate: {e}")))?;
        store
            .add(cert)
            .map_err(|e| bad(format!("a certificate rustls refuses: {e}")))?;
    }
    if store.is_empty() {
        return Err(bad("holds no certificate (PEM, BEGIN CERTIFICATE)".into()));
    }
    Ok(store)
}

/// The TLS connector for what `ask` asks (not for `disable`).
pub fn connector(ask: &Ask) -> Result<tokio_postgres_rustls::MakeRustlsConnect, DbError> {
    // ring's key exchanges are the classical ones (rustls deprecates it
    // for want of post-quantum ones); it builds for every system
    // scalebench supports, with no CMake and no system OpenSSL.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| DbError::TlsAsk(format!("rustls: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = match ca_file(ask)? {
        None => Arc::new(Unchecked(provider)),
        Some(file) => {
            let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(&file)?),
                provider,
            )
            .build()
            .map_err(|e| DbError::TlsAsk(format!("rustls: {e}")))?;
            Arc::new(Signed {
                inner,
                name_too: ask.mode == Mode::VerifyFull,
            })
        }
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// Whether the server at `config`'s first host answers PostgreSQL's
/// request for TLS with yes; `None` when it cannot be asked.
pub fn offered(config: &postgres::Config) -> Option<bool> {
    use std::time::Duration;
    // SSLRequest: length 8, code 80877103.
    const REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let limit = Duration::from_secs(10);
    // `S` yes, `N` no; anything else (an error message) tells nothing.
    let answer = |s: &mut dyn ReadWrite| -> Option<bool> {
        s.write_all(&REQUEST).ok()?;
        let mut b = [0u8; 1];
        s.read_exact(&mut b).ok()?;
        match b[0] {
            b'S' => Some(true),
            b'N' => Some(false),
            _ => None,
        }
    };
    match config.get_hosts().first()? {
        postgres::config::Host::Tcp(h) => {
            use std::net::ToSocketAddrs;
            let at = (h.as_str(), port).to_socket_addrs().ok()?.next()?;
            let mut s = std::net::TcpStream::connect_timeout(&at, limit).ok()?;
            s.set_read_timeout(Some(limit)).ok()?;
            answer(&mut s)
        }
        #[cfg(unix)]
        postgres::config::Host::Unix(dir) => {
            let path = dir.join(format!(".s.PGSQL.{port}"));
            let mut s = std::os::unix::net::UnixStream::connect(path).ok()?;
            s.set_read_timeout(Some(limit)).ok()?;
            answer(&mut s)
        }
    }
}

/// A stream to ask on.
trait ReadWrite: std::io::Read + std::io::Write {}
impl<T: std::io::Read + std::io::Write> ReadWrite for T {}

/// A server certificate taken unchecked (`prefer`, and `require` without
/// a CA file, as libpq does): the connection is encrypted, the server not
/// authenticated. Its handshake signatures are still checked.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A server certificate checked against the CA: its chain always, the
/// host name it was issued for only when `name_too` (`verify-full`).
#[derive(Debug)]
struct Signed {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    name_too: bool,
}

impl ServerCertVerifier for Signed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The chain is checked before the name: a wrong name alone means
        // the chain held.
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.name_too => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tls_parameters_come_out_of_the_url_and_the_rest_stays() {
        let (rest, ask) =
            split("postgres://w@db:5433/runs?sslmode=verify-full&connect_timeout=5&sslrootcert=%2Fetc%2Fca%20x.pem")
                .unwrap();
        assert_eq!(rest, "postgres://w@db:5433/runs?connect_timeout=5");
        assert_eq!(ask.mode, Mode::VerifyFull);
        assert_eq!(ask.root, Some(PathBuf::from("/etc/ca x.pem")));
        let (rest, ask) = split("postgres://w@db/runs").unwrap();
        assert_eq!(
            (rest.as_str(), ask.mode, ask.root),
            ("postgres://w@db/runs", Mode::Prefer, None)
        );
        let (rest, ask) = split("postgres://w@db/runs?sslmode=require").unwrap();
        assert_eq!(
            (rest.as_str(), ask.mode),
            ("postgres://w@db/runs", Mode::Require)
        );
        for (n, m) in Mode::ALL {
            assert_eq!(m.name(), n);
            assert_eq!(
                split(&format!("postgres://h/d?sslmode={n}"))
                    .unwrap()
                    .1
                    .mode,
                m
            );
        }
    }

    #[test]
    fn a_bad_tls_parameter_is_named() {
        let e = split("postgres://h/d?sslmode=verify").unwrap_err();
        assert!(
            e.starts_with("sslmode=verify: not a mode") && e.contains("verify-full"),
            "{e}"
        );
        let e = split("postgres://h/d?sslmode=require&sslmode=disable").unwrap_err();
        assert_eq!(e, "sslmode is given twice");
        let e = split("postgres://h/d?sslrootcert=").unwrap_err();
        assert!(e.starts_with("sslrootcert is empty"), "{e}");
        let e = split("postgres://h/d?sslrootcert=system").unwrap_err();
        assert!(e.starts_with("sslrootcert=system: not supported"), "{e}");
    }

    #[test]
    fn a_verifying_mode_needs_a_readable_ca_file() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("nothing.pem");
        let ask = Ask {
            mode: Mode::VerifyFull,
            root: Some(missing.clone()),
        };
        let e = connector(&ask).err().expect("refused").to_string();
        assert!(e.starts_with(&format!("{}: ", missing.display())), "{e}");
        let empty = d.path().join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        let ask = Ask {
            mode: Mode::VerifyCa,
            root: Some(empty.clone()),
        };
        let e = connector(&ask).err().expect("refused").to_string();
        assert!(e.contains("holds no certificate"), "{e}");
        // Nothing to check: no file needed.
        for mode in [Mode::Prefer, Mode::Require] {
            assert!(connector(&Ask { mode, root: None }).is_ok());
        }
    }
}
