"""The knapsack family (kp, mkp, gap, mdkp, qkp, qmkp) and R-Storm's QM3DKP view, all mapped onto one general form."""
