// ZooKeeper 3.8's ControllerService, run until its own `shutdown` command: its main starts
// everything on a daemon thread and returns at once, so the JVM would exit. This joins that
// thread instead. Used by .ci/controller.sh, the side-by-side comparison with Shepherd.
//
//   java -Dzookeeper.controllerPort=PORT -cp ZK_CLASSPATH ControllerMain.java zoo.cfg

import org.apache.zookeeper.server.controller.ControllerServerConfig;
import org.apache.zookeeper.server.controller.ControllerService;

public class ControllerMain {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: ControllerMain zoo.cfg");
            System.exit(2);
        }
        Thread runner = new ControllerService().start(new ControllerServerConfig(args[0]));
        runner.join();
    }
}
