"""The gateway core: dispatch between adapters, the store and the agent runner.

Public surface (other modules and tests rely on these names):

    gateway = Gateway(config, store, runner)
    gateway.register(adapter)             # a PlatformAdapter
    await gateway.start(workers=4)        # adapters' start() + stream workers
    await gateway.drain(timeout=10)       # tests: wait until every accepted job is done
    await gateway.stop(grace=10)          # stop taking work, finish or hand back, close

``Gateway`` implements ``gateway.port.GatewayPort`` for adapters.
"""
