-- Stand-in for the CORS library that unsupported-lua-load.cfg loads, so that `haproxy -c`
-- accepts that configuration: it registers the two actions the configuration calls and does
-- nothing. tern does not run Lua; the configuration is an "unsupported keyword" test.
core.register_action("cors", { "http-req" }, function(txn, methods, origins, headers) end, 3)
core.register_action("cors", { "http-res" }, function(txn) end, 0)
