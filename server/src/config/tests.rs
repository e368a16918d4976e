//! The configuration read from zoo.cfg text and typed settings.

use super::*;
use shepherd_protocol::FourLetterWord;

#[test]
fn zoo_cfg_known_and_unknown_keys() {
    let mut config = Config::default();
    let warnings = config
        .apply_zoo_cfg(
            "# sample\ntickTime=500\nclientPort=2181\ndataDir=/tmp/zk\nfoo.bar=1\n\
             4lw.commands.whitelist=srvr, mntr,nope\n",
        )
        .unwrap();
    assert_eq!(config.core.tick_time_ms, 500);
    assert_eq!(config.core.min_session_timeout_ms, 1000);
    assert_eq!(config.core.max_session_timeout_ms, 10000);
    assert_eq!(config.port, 2181);
    assert!(config.four_letter_words.allows(FourLetterWord::Mntr));
    assert!(!config.four_letter_words.allows(FourLetterWord::Ruok));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert_eq!(
        config.durability.data_dir,
        Some(std::path::PathBuf::from("/tmp/zk"))
    );
    assert!(config.apply_zoo_cfg("tickTime=abc").is_err());
    assert_eq!(
        config.admin_server, None,
        "the AdminServer is off by default"
    );
    assert_eq!(config.metrics_server, None, "/metrics is off by default");
}

#[test]
fn sync_limit_is_read_in_ticks() {
    let mut config = Config::default();
    assert_eq!(config.sync_limit_ticks, 5, "5 ticks by default");
    let warnings = config
        .apply_zoo_cfg(
            "tickTime=500
syncLimit=3
",
        )
        .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(config.sync_limit(), std::time::Duration::from_millis(1500));
}

#[test]
fn typed_settings_refuse_an_unknown_key_by_name_and_win_over_the_file() {
    let set = |items: &[&str]| items.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    let mut config = Config::default();
    let error = config
        .apply_zoo_cfg_and_settings("ticktime=1\n", &set(&["tickTime=500", "ticktime=600"]))
        .unwrap_err();
    assert_eq!(
        error,
        "setting 2: ticktime=600: unknown zoo.cfg key ticktime; did you mean tickTime?"
    );
    for bad in ["tickTime", "", "# comment", "tickTime=500\nfoo=1"] {
        let result = Config::default().apply_zoo_cfg_and_settings("", &set(&[bad]));
        assert!(result.is_err(), "{bad:?} accepted");
    }
    let mut config = Config::default();
    let warnings = config
        .apply_zoo_cfg_and_settings(
            "tickTime=100\nadmin.enableServer=true\nfoo=1\n",
            &set(&["tickTime=500", "initLimit=5", "admin.serverPort=0"]),
        )
        .unwrap();
    assert_eq!(
        config.core.tick_time_ms, 500,
        "a setting wins over the file"
    );
    assert_eq!(config.admin_server, Some(([127, 0, 0, 1], 0).into()));
    // The file's unknown key and the known but ignored setting warn.
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let initial = config.initial_configuration.unwrap();
    assert!(initial.ends_with("foo=1\ntickTime=500\ninitLimit=5\nadmin.serverPort=0\n"));
}

#[test]
fn zoo_cfg_values_out_of_range_are_errors_naming_the_key() {
    let err = |text: &str| Config::default().apply_zoo_cfg(text).unwrap_err();
    for (text, key) in [
        (
            "maxSessionTimeout=4294967296",
            "maxSessionTimeout=4294967296",
        ),
        (
            "minSessionTimeout=2147483648",
            "minSessionTimeout=2147483648",
        ),
        ("tickTime=0", "tickTime=0"),
        ("tickTime=4294967297", "tickTime=4294967297"),
        ("maxClientCnxns=-1", "maxClientCnxns=-1"),
        ("maxClientCnxns=4294967296", "maxClientCnxns=4294967296"),
        (
            "znode.container.maxPerMinute=4294967296",
            "maxPerMinute=4294967296",
        ),
        ("jute.maxbuffer=0", "jute.maxbuffer=0"),
        ("syncLimit=x", "syncLimit=x"),
        ("jute.maxbuffer=268435457", "jute.maxbuffer=268435457"),
        ("jute.maxbuffer=18446744073709551616", "jute.maxbuffer"),
    ] {
        let message = err(text);
        assert!(message.contains(key), "{text}: {message}");
    }
    let message = err("minSessionTimeout=5000\nmaxSessionTimeout=4000");
    assert!(message.contains("minSessionTimeout (5000)"), "{message}");

    let mut config = Config::default();
    config
        .apply_zoo_cfg(&format!(
            "jute.maxbuffer={MAX_JUTE_BUFFER}\nmaxSessionTimeout=2147483647\n\
             minSessionTimeout=-1\n"
        ))
        .expect("the largest values are accepted");
    assert_eq!(config.max_buffer, MAX_JUTE_BUFFER);
    assert_eq!(config.core.max_session_timeout_ms, i32::MAX as u32);
    assert_eq!(config.core.min_session_timeout_ms, 4000, "-1 is 2 ticks");
}

#[test]
fn zoo_cfg_admin_server_and_metrics_keys() {
    let mut config = Config::default();
    let text = format!(
        "admin.serverPort=9090\nadmin.enableServer=true\n\
         metricsProvider.className={PROMETHEUS_PROVIDER}\n"
    );
    let warnings = config.apply_zoo_cfg(&text).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(config.admin_server, Some("127.0.0.1:9090".parse().unwrap()));
    assert_eq!(
        config.metrics_server,
        Some("127.0.0.1:7000".parse().unwrap())
    );
    assert_eq!(config.initial_configuration.as_deref(), Some(text.as_str()));

    let mut config = Config::default();
    config
        .apply_zoo_cfg(
            "admin.enableServer=false\nadmin.serverPort=9090\n\
             metricsProvider.httpHost=0.0.0.0\nmetricsProvider.httpPort=7001\n",
        )
        .unwrap();
    assert_eq!(config.admin_server, None, "enableServer=false keeps it off");
    assert_eq!(config.metrics_server, None, "no Prometheus provider named");
    assert!(config.apply_zoo_cfg("admin.serverPort=x").is_err());
}
